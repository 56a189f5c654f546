import type { Db } from '../../../core/db/db.ts';
import type { EmbeddingProvider } from '../../../core/providers/embeddings/provider.ts';
import type { ClaimedJob } from '../queue.ts';
import { UnrecoverableJobError } from '../job-errors.ts';
import { vectorIndexDdl } from '../../retrieval/vector-index.ts';

// Per database: a process that opens two databases must index each.
const ensuredDimensions = new WeakMap<Db, Set<number>>();
// Serializes index creation across processes: two workers creating the same index at once would
// fail on the catalog's unique constraint.
const INDEX_LOCK = 7_310_452;

/**
 * Creates, once per dimension, the partial HNSW index (cosine) that vector search uses for
 * chunks of that dimension (none above the 4,000 pgvector indexes). The column has no fixed
 * dimension, so the index is on an expression of it restricted to `embedding_dimension = N`
 * (`vectorIndexDdl`), and queries use that expression. None on PGlite, whose own index replaces it.
 */
export async function ensureVectorIndex(db: Db, dimension: number): Promise<void> {
  const ensured = ensuredDimensions.get(db) ?? new Set<number>();
  ensuredDimensions.set(db, ensured);
  // PGlite keeps its own vector index (pglite-vectors.ts) in place of pgvector's.
  if (ensured.has(dimension) || db.searchVectors) return;
  if (!Number.isInteger(dimension) || dimension < 1 || dimension > 16000) throw new Error(`Bad dimension ${dimension}`);
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [INDEX_LOCK]);
    // The dimension is an integer checked above: it is safe in DDL, which takes no parameters.
    const ddl = vectorIndexDdl(dimension);
    if (ddl) await tx.exec(ddl);
  });
  ensured.add(dimension);
}

/**
 * Records which provider, model and dimension a knowledge base's vectors come from at its first
 * ingestion, and refuses to mix: vectors of two models are not comparable.
 */
export async function lockEmbedding(db: Db, job: ClaimedJob, embedder: EmbeddingProvider): Promise<void> {
  await db.query(
    `UPDATE knowledge_bases SET embedding_provider = $3, embedding_model = $4, embedding_dimension = $5, updated_at = now()
     WHERE workspace_id = $1 AND id = $2 AND embedding_provider IS NULL`,
    [job.workspaceId, job.knowledgeBaseId, embedder.name, embedder.model, embedder.dimension],
  );
  const { rows } = await db.query<{ embedding_provider: string; embedding_model: string; embedding_dimension: number }>(
    'SELECT embedding_provider, embedding_model, embedding_dimension FROM knowledge_bases WHERE workspace_id = $1 AND id = $2',
    [job.workspaceId, job.knowledgeBaseId],
  );
  const stored = rows[0];
  if (!stored) throw new UnrecoverableJobError('The knowledge base was deleted.');
  if (stored.embedding_provider !== embedder.name || stored.embedding_model !== embedder.model || stored.embedding_dimension !== embedder.dimension) {
    throw new UnrecoverableJobError(
      `The knowledge base holds vectors of ${stored.embedding_provider}/${stored.embedding_model} (${stored.embedding_dimension} dimensions), ` +
        `but this worker embeds with ${embedder.name}/${embedder.model} (${embedder.dimension}); vectors of different models cannot be mixed.`,
    );
  }
  await ensureVectorIndex(db, embedder.dimension);
}
