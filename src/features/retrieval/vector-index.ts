/**
 * The HNSW index of the chunks' vectors of one dimension and the distance that reads it, kept in
 * one place because a search only uses the index when its expression is the index's. PostgreSQL's
 * only: PGlite keeps its own (pglite-vectors.ts), and searches these expressions exactly when a
 * filter keeps a search in SQL.
 *
 * pgvector indexes `vector` up to 2,000 dimensions, so a 3,072-dimension model (OpenAI's
 * text-embedding-3-large) had no index: its jobs retried and failed. Above 2,000 dimensions the
 * index holds the vectors as `halfvec` (16-bit floats, indexed up to 4,000), the column keeps
 * 32-bit floats, and the search re-sorts the index's candidates by their full-precision cosine,
 * the score returned. Above 4,000 there is no index and the search is exact.
 *
 * Why not halfvec for every dimension (decision 164): in PGlite, whose pgvector is WebAssembly
 * without the CPU's half-float conversion, a halfvec index made ingestion four times slower (45
 * chunks/s against 173-193, builtin-fast); on PostgreSQL it halved the index (130 MB against 260
 * at 100,002 chunks of 512 dimensions) but gained only 4-8 % of ingestion and no query CPU.
 */

/** The largest dimension pgvector indexes as `vector`. */
const VECTOR_INDEX_MAX_DIMENSION = 2000;
/** The largest dimension pgvector indexes as `halfvec`. */
const HALFVEC_INDEX_MAX_DIMENSION = 4000;

const halfPrecision = (dimension: number) => dimension > VECTOR_INDEX_MAX_DIMENSION && dimension <= HALFVEC_INDEX_MAX_DIMENSION;

/**
 * The partial index of one dimension, or undefined when pgvector indexes none that large.
 * `dimension` must be an integer: DDL takes no parameters.
 */
export function vectorIndexDdl(dimension: number): string | undefined {
  if (!Number.isInteger(dimension)) throw new Error(`A vector dimension must be an integer, not ${dimension}.`);
  if (dimension > HALFVEC_INDEX_MAX_DIMENSION) return undefined;
  const [name, type, operators] = halfPrecision(dimension) ? ['halfvec', 'halfvec', 'halfvec_cosine_ops'] : ['hnsw', 'vector', 'vector_cosine_ops'];
  return `CREATE INDEX IF NOT EXISTS chunks_embedding_${name}_${dimension} ON chunks
       USING hnsw ((embedding::${type}(${dimension})) ${operators}) WHERE embedding_dimension = ${dimension}`;
}

/** Cosine distance of chunk `c` to the vector bound as parameter `parameter`, at full precision. */
export function cosineDistance(dimension: number, parameter: number): string {
  return `c.embedding::vector(${dimension}) <=> $${parameter}::vector(${dimension})`;
}

/**
 * The distance the index of the dimension orders by: `cosineDistance`, or above 2,000 dimensions
 * the same between both vectors rounded to halfvec, as the index holds them.
 */
export function indexedDistance(dimension: number, parameter: number): string {
  if (!halfPrecision(dimension)) return cosineDistance(dimension, parameter);
  return `c.embedding::halfvec(${dimension}) <=> $${parameter}::vector(${dimension})::halfvec(${dimension})`;
}
