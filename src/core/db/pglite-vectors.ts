/**
 * The embedded engine's vector index: USearch's HNSW graph in native code, held by the database's
 * thread, in place of pgvector's HNSW compiled to WebAssembly (decision 170), whose insert cost
 * PGlite's one thread 8.8 ms a chunk, most of an ingestion's writes. On SciFact's 12,995 chunks
 * (builtin-fast), this graph finds the 75 nearest in 3.9 ms p50 (the log read and the thread's
 * round trip included) against pgvector's 7.5, with recall@10 0.977 against 0.961
 * (bench:vector-recall), and PGlite ingests 3.6 times faster (bench/history.md,
 * "PGlite's own vector index").
 *
 * The chunks table stays the truth and these graphs are derived from it. A knowledge base's graph
 * of one dimension is built from its chunks after its first search since the database opened, and
 * kept in step by a change log that triggers on `chunks` fill inside the writing transaction
 * (`chunk_vector_changes`): a rolled-back write leaves no row, a cascade from a deleted knowledge
 * base or workspace leaves its rows, and PGlite runs one transaction at a time, so the log's order
 * is the commit order. The log is read and emptied after commits and before every search.
 * Applying a change is idempotent (an added chunk is added only if it still exists and is not in
 * the graph; a removed one is removed if present), so a graph built while changes were pending
 * may replay them safely. Nothing is written to disk: a restart rebuilds each graph on demand.
 *
 * A search does not wait for a build: until its knowledge base's graph is built, the search scans
 * the table exactly, which is always up to date. At SciFact's 12,995 chunks a build takes 3.6-4.5 s
 * on one thread (ChunkGraph.addMany), which the first search after a start waited for; it now takes
 * 69-91 ms, and the searches during the build 58-87 ms at p50 (`bench:vector-recall`). Changes
 * logged during a build are kept and applied to the graph once it is built.
 */
import { createRequire } from 'node:module';
import type { PGlite } from '@electric-sql/pglite';
import type USearch from 'usearch';

// USearch's ES module finds its native binary from the caller's stack, which fails in a thread
// started from evaluated code (spawn-worker.ts) and recurses to a stack overflow; its CommonJS
// build finds it from its own directory.
const usearch = createRequire(import.meta.url)('usearch') as typeof USearch;

export type VectorSearchRequest = { workspaceId: string; knowledgeBaseIds: string[]; dimension: number; vector: Float32Array; limit: number };
export type VectorMatch = { id: string; distance: number };
/** The graphs of the open database: built, and being built. */
export type VectorGraphs = { built: number; building: number };
/** Runs a statement whose parameters may hold a vector (`Float32Array`, bound in binary). */
export type VectorStatement = <T>(text: string, values: unknown[]) => Promise<{ rows: T[] }>;

/**
 * pgvector's build parameters (16 links a node, a build search of 64 candidates), and a query
 * search of at least 150 where pgvector's is 75 (VECTOR_SEARCH_DEFAULTS): at 75 this graph found
 * fewer of the true nearest than pgvector's (recall@75 0.82 against 0.87 on SciFact's test
 * queries); at 150, 0.91-0.92 on train and test for 1.2 ms more. Building with 128 instead of 64
 * gained 1-2 points for 40 % more build time.
 */
const GRAPH = { connectivity: 16, expansionAdd: 64, expansionSearch: 150 };

/** An empty USearch graph of cosine distances with GRAPH's parameters (bench:graph-faults uses it too). */
export function newGraph(dimension: number): InstanceType<typeof USearch.Index> {
  return new usearch.Index({
    dimensions: dimension,
    metric: usearch.MetricKind.Cos,
    quantization: usearch.ScalarKind.F32,
    connectivity: GRAPH.connectivity,
    expansion_add: GRAPH.expansionAdd,
    expansion_search: GRAPH.expansionSearch,
    multi: false,
  });
}

/**
 * Vector values a graph's build adds between two turns of the database's thread: 128 vectors of
 * 512 dimensions, about 40 ms on one core at 0.3 ms a vector.
 */
const BUILD_SLICE_VALUES = 65_536;

/**
 * Vector values a build reads per statement: 4,096 vectors of 512 dimensions. Read in one
 * statement, SciFact's 12,995 kept the database's other statements waiting 0.56-0.65 s once per
 * build; in pages of 4,096, 0.35-0.48 s (what is left is mostly the read of the ids); in pages of
 * 1,024, 0.27-0.30 s, but the build took 25 % longer (5.0-5.1 s against 4.1-4.6;
 * bench:vector-recall's `build`).
 */
const READ_PAGE_VALUES = 2_097_152;

/** Rows of the log read per statement: bounds the memory of a catch-up after a large ingestion. */
const LOG_BATCH = 5_000;

/**
 * The log and its triggers; the statement-level triggers write one row per chunk with a single
 * INSERT per statement. pgvector's HNSW indexes of the chunks are dropped: this graph replaces
 * them, and PGlite would otherwise keep maintaining them on every insert.
 */
const SETUP = `
CREATE TABLE IF NOT EXISTS chunk_vector_changes (
  seq bigserial PRIMARY KEY,
  workspace_id uuid NOT NULL,
  knowledge_base_id uuid NOT NULL,
  chunk_id uuid NOT NULL,
  added boolean NOT NULL
);
CREATE OR REPLACE FUNCTION log_chunk_vector_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    INSERT INTO chunk_vector_changes (workspace_id, knowledge_base_id, chunk_id, added)
    SELECT workspace_id, knowledge_base_id, id, false FROM old_chunks;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO chunk_vector_changes (workspace_id, knowledge_base_id, chunk_id, added)
    SELECT workspace_id, knowledge_base_id, id, true FROM new_chunks;
  END IF;
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER chunks_vectors_inserted AFTER INSERT ON chunks
  REFERENCING NEW TABLE AS new_chunks FOR EACH STATEMENT EXECUTE FUNCTION log_chunk_vector_changes();
CREATE OR REPLACE TRIGGER chunks_vectors_updated AFTER UPDATE ON chunks
  REFERENCING OLD TABLE AS old_chunks NEW TABLE AS new_chunks FOR EACH STATEMENT EXECUTE FUNCTION log_chunk_vector_changes();
CREATE OR REPLACE TRIGGER chunks_vectors_deleted AFTER DELETE ON chunks
  REFERENCING OLD TABLE AS old_chunks FOR EACH STATEMENT EXECUTE FUNCTION log_chunk_vector_changes();
TRUNCATE chunk_vector_changes;
DO $$
DECLARE name text;
BEGIN
  FOR name IN SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'chunks' AND indexname LIKE 'chunks_embedding_%' LOOP
    EXECUTE format('DROP INDEX %I', name);
  END LOOP;
END $$;`;

/**
 * Vectors are read in pgvector's binary form (`vector_send`: dimension and a reserved word, int16
 * each, then float4s, all big-endian), as base64 text: PGlite decodes a `bytea` column in
 * JavaScript, 4.4-4.8 s for 12,995 vectors of 512 dimensions, where the same as base64 took
 * 0.3-0.5 s and Node's decoding 40 ms.
 */
const VECTOR_BYTES = "encode(vector_send(c.embedding), 'base64')";

function readVector(base64: string): Float32Array {
  const bytes = Buffer.from(base64, 'base64');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const dimension = view.getInt16(0);
  const vector = new Float32Array(dimension);
  for (let i = 0; i < dimension; i++) vector[i] = view.getFloat32(4 + 4 * i);
  return vector;
}

/** A logged change: a chunk added (with its vector) or removed. */
type Change = { chunkId: string; vector?: Float32Array };

/**
 * One knowledge base's chunks of one dimension. USearch keys are integers: chunk ids map to them,
 * and a chunk added again (its vector changed) gets a new key.
 *
 * A removed chunk stays in the graph, unlisted here, and searches skip it; USearch's own `remove`
 * is never called. In 2.25.3 it spins forever once the open-addressing table of its keys has no
 * empty slot (a removed key stays there as a tombstone, and a new key may take an empty slot, so
 * churn drains them): replacing the vectors of a graph's chunks over and over hung it after 5 to
 * 9 times its size in removals (20 chunks: 172; 100: 668; 2,000: 10,288-12,192; 5,000: 47,768),
 * and with it the database's thread. Its removed slots are also reused by later additions, which
 * leaves the links of other nodes pointing at an unrelated vector; a chunk kept as a dead node
 * still routes searches through its region.
 *
 * Once the dead outnumber the live (64 at least), the graph is worn (`spent`): dropped, and built
 * again from the table after its next search, which bounds its memory to twice its chunks and a
 * search's extra depth to the dead share of its results.
 */
class ChunkGraph {
  private readonly graph: InstanceType<typeof USearch.Index>;
  private readonly keys = new Map<string, bigint>();
  private readonly ids = new Map<bigint, string>();
  private nextKey = 1n;
  private dead = 0;

  constructor(dimension: number) {
    this.graph = newGraph(dimension);
  }

  get size(): number {
    return this.keys.size;
  }

  /** Empty, or holds more removed chunks than live ones (worn): to be built again if searched. */
  get spent(): boolean {
    return this.size === 0 || this.dead > Math.max(64, this.size);
  }

  /**
   * Adds many chunks, on one thread. USearch 2.25.3's batch add on several threads leaves some
   * nodes that no search reaches, at any depth: on this machine's 2 cores, 65 of 200 graphs of 60
   * random 16-dimension vectors had one or more (81 of 12,000 nodes), 22 of 50 graphs of 200
   * 512-dimension ones (35 of 10,000), and 5 of 6 graphs of 2,000 with their first 256 or 1,000
   * added on one thread first (0-2 each); added on one thread, none (0 of 12,000 and 4,000).
   *
   * The thread is the database's: it adds a slice of BUILD_SLICE_VALUES at a time and lets the
   * statements waiting meanwhile run between slices, where one add of SciFact's 12,995 chunks
   * kept every other statement waiting 2.1 s (`bench:vector-recall`, `otherStatementMaxMs`).
   */
  async addMany(ids: string[], vectors: Float32Array[]): Promise<void> {
    if (ids.length === 0) return;
    const dimension = vectors[0]!.length;
    const slice = Math.max(8, Math.floor(BUILD_SLICE_VALUES / dimension));
    for (let start = 0; start < ids.length; start += slice) {
      if (start > 0) await new Promise((resolve) => setImmediate(resolve));
      const end = Math.min(ids.length, start + slice);
      const keys = new BigUint64Array(end - start);
      const flat = new Float32Array((end - start) * dimension);
      for (let index = start; index < end; index++) {
        keys[index - start] = this.key(ids[index]!);
        flat.set(vectors[index]!, (index - start) * dimension);
      }
      this.graph.add(keys, flat, 1);
    }
  }

  /** A logged change: a chunk added with its vector, or removed. */
  apply(change: Change): void {
    if (change.vector) this.add(change.chunkId, change.vector);
    else this.remove(change.chunkId);
  }

  private add(id: string, vector: Float32Array): void {
    if (this.keys.has(id)) return;
    this.graph.add(this.key(id), vector);
  }

  private remove(id: string): void {
    const key = this.keys.get(id);
    if (key === undefined) return;
    this.keys.delete(id);
    this.ids.delete(key);
    this.dead += 1;
  }

  /**
   * The `limit` nearest live chunks, nearest first. USearch searches at least `limit` deep; the
   * dead nodes among the results are made up for by searching deeper, first by their expected
   * share, then twice as deep until enough live ones come or the whole graph has been asked.
   */
  search(vector: Float32Array, limit: number): VectorMatch[] {
    if (this.size === 0) return [];
    const nodes = this.size + this.dead;
    let depth = Math.min(nodes, limit + Math.ceil((limit * this.dead) / this.size));
    for (;;) {
      const { keys, distances } = this.graph.search(vector, depth, 0);
      const matches: VectorMatch[] = [];
      for (const [index, key] of keys.entries()) {
        const id = this.ids.get(key);
        if (id !== undefined) matches.push({ id, distance: distances[index]! });
      }
      if (matches.length >= limit || depth >= nodes) return matches.slice(0, limit);
      depth = Math.min(nodes, depth * 2);
    }
  }

  private key(id: string): bigint {
    const key = this.nextKey++;
    this.keys.set(id, key);
    this.ids.set(key, id);
    return key;
  }
}

type ChangeRow = { seq: string; workspace_id: string; knowledge_base_id: string; chunk_id: string; added: boolean; dimension: number | null; vector: string | null };

/** A knowledge base's graph of one dimension, and the changes to apply to it once it is built. */
type GraphEntry = { graph: ChunkGraph; pending?: Change[] };

export class NativeVectors {
  /** By `workspace/knowledge base`, then by dimension. */
  private readonly graphs = new Map<string, Map<number, GraphEntry>>();
  private readonly builds = new Set<Promise<void>>();
  private ready = false;
  // Every operation runs after the previous one: two catch-ups must not interleave. Builds run
  // beside them, and leave the changes meanwhile to their entry's `pending`.
  private tail: Promise<unknown> = Promise.resolve();
  private catchUpScheduled = false;

  constructor(
    private readonly database: () => PGlite,
    private readonly statement: VectorStatement,
  ) {}

  /** Sets the log up when the database opens, if it has been migrated already. */
  opened(): Promise<void> {
    return this.serially(async () => void (await this.setUp()));
  }

  /**
   * The `limit` nearest chunks of the knowledge bases, nearest first: from each one's graph, or,
   * until it is built, from an exact scan of its chunks; the first such scan starts the build.
   */
  search(request: VectorSearchRequest): Promise<VectorMatch[]> {
    return this.serially(async () => {
      if (!(await this.setUp())) return [];
      await this.catchUp();
      const matches: VectorMatch[] = [];
      for (const knowledgeBaseId of new Set(request.knowledgeBaseIds)) {
        const entry = this.graphs.get(baseKey(request.workspaceId, knowledgeBaseId))?.get(request.dimension);
        if (entry && !entry.pending) {
          matches.push(...entry.graph.search(request.vector, request.limit));
          continue;
        }
        const scanned = await this.scan(request, knowledgeBaseId);
        // A knowledge base without chunks gets no graph: until it has some, each search scans.
        if (!entry && scanned.length > 0) this.build(request.workspaceId, knowledgeBaseId, request.dimension);
        matches.push(...scanned);
      }
      return matches.sort((a, b) => a.distance - b.distance).slice(0, request.limit);
    });
  }

  /** How many graphs are built and being built; with `settled`, once the builds in flight have ended. */
  async status(settled = false): Promise<VectorGraphs> {
    if (settled) await Promise.all(this.builds);
    const entries = [...this.graphs.values()].flatMap((graphs) => [...graphs.values()]);
    const building = entries.filter((entry) => entry.pending).length;
    return { built: entries.length - building, building };
  }

  /**
   * Told after a commit: the log is applied soon after, in the background, so that a search after
   * a long ingestion does not apply it all. 50 ms gathers a bulk job's record transactions (one
   * every 20-40 ms) into one catch-up.
   */
  committed(): void {
    if (this.catchUpScheduled || !this.ready) return;
    this.catchUpScheduled = true;
    setTimeout(() => {
      this.catchUpScheduled = false;
      void this.serially(() => this.catchUp()).catch(() => undefined);
    }, 50);
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const run = this.tail.then(work, work);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Creates the log and its triggers once the chunks table exists (after the first migration). */
  private async setUp(): Promise<boolean> {
    if (this.ready) return true;
    const pg = this.database();
    const { rows } = await pg.query<{ exists: boolean }>("SELECT to_regclass('chunks') IS NOT NULL AS exists");
    if (!rows[0]!.exists) return false;
    await pg.exec(SETUP);
    this.ready = true;
    return true;
  }

  /** Applies the logged changes to the graphs built so far, then forgets them. */
  private async catchUp(): Promise<void> {
    if (!this.ready) return;
    const pg = this.database();
    // No graph to keep in step: the log only has to be emptied.
    if (this.graphs.size === 0) {
      await pg.query('DELETE FROM chunk_vector_changes');
      return;
    }
    for (;;) {
      const { rows } = await pg.query<ChangeRow>(
        `SELECT v.seq, v.workspace_id, v.knowledge_base_id, v.chunk_id, v.added, c.embedding_dimension AS dimension, ${VECTOR_BYTES} AS vector
         FROM chunk_vector_changes v
         LEFT JOIN chunks c ON v.added AND c.workspace_id = v.workspace_id AND c.id = v.chunk_id
         ORDER BY v.seq LIMIT ${LOG_BATCH}`,
      );
      for (const row of rows) {
        const base = baseKey(row.workspace_id, row.knowledge_base_id);
        const graphs = this.graphs.get(base);
        if (!graphs) continue;
        if (!row.added) {
          for (const [dimension, entry] of graphs) this.apply(graphs, dimension, entry, { chunkId: row.chunk_id });
          if (graphs.size === 0) this.graphs.delete(base);
        } else if (row.vector && row.dimension !== null) {
          // A chunk deleted since it was logged has no row left: its removal follows in the log.
          const entry = graphs.get(row.dimension);
          if (entry) this.apply(graphs, row.dimension, entry, { chunkId: row.chunk_id, vector: readVector(row.vector) });
        }
      }
      if (rows.length > 0) await pg.query('DELETE FROM chunk_vector_changes WHERE seq <= $1', [rows.at(-1)!.seq]);
      if (rows.length < LOG_BATCH) return;
    }
  }

  /**
   * Applies a change to a built graph, or keeps it for a graph being built. A built graph left
   * empty or worn is dropped: built again from the table after its next search (see ChunkGraph).
   */
  private apply(graphs: Map<number, GraphEntry>, dimension: number, entry: GraphEntry, change: Change): void {
    if (entry.pending) {
      entry.pending.push(change);
      return;
    }
    entry.graph.apply(change);
    if (entry.graph.spent) graphs.delete(dimension);
  }

  /** The `limit` nearest chunks of one knowledge base by an exact scan of the table. */
  private async scan(request: VectorSearchRequest, knowledgeBaseId: string): Promise<VectorMatch[]> {
    const { dimension, limit } = request;
    // Both are written into the text (the cast must name the dimension): integers only.
    if (!Number.isInteger(dimension) || !Number.isInteger(limit)) throw new Error(`A vector search needs integers, not ${dimension} and ${limit}.`);
    const { rows } = await this.statement<VectorMatch>(
      `SELECT c.id, c.embedding::vector(${dimension}) <=> $4::vector(${dimension}) AS distance FROM chunks c
       WHERE c.workspace_id = $1 AND c.knowledge_base_id = $2 AND c.embedding_dimension = $3
       ORDER BY distance LIMIT ${limit}`,
      [request.workspaceId, knowledgeBaseId, dimension, request.vector],
    );
    return rows;
  }

  /**
   * Builds a knowledge base's graph of a dimension from the table, beside the searches that scan
   * meanwhile. The entry is listed before the table is read, so that every change the reads do
   * not see is kept in its `pending` by a catch-up and applied after (twice is harmless): a chunk
   * deleted before its page is read is missing from it, one added after the ids were read comes
   * from `pending`.
   */
  private build(workspaceId: string, knowledgeBaseId: string, dimension: number): void {
    const base = baseKey(workspaceId, knowledgeBaseId);
    const graphs = this.graphs.get(base) ?? new Map<number, GraphEntry>();
    const entry: GraphEntry = { graph: new ChunkGraph(dimension), pending: [] };
    this.graphs.set(base, graphs.set(dimension, entry));
    const unlist = () => {
      if (graphs.get(dimension) === entry) graphs.delete(dimension);
      if (graphs.size === 0 && this.graphs.get(base) === graphs) this.graphs.delete(base);
    };
    const building = (async () => {
      const pg = this.database();
      // The chunks' ids first, then their vectors a page at a time, each page added before the
      // next is read: other statements wait for one page, not for the whole knowledge base.
      const { rows: listed } = await pg.query<{ id: string }>(
        'SELECT c.id FROM chunks c WHERE c.workspace_id = $1 AND c.knowledge_base_id = $2 AND c.embedding_dimension = $3',
        [workspaceId, knowledgeBaseId, dimension],
      );
      const page = Math.max(8, Math.floor(READ_PAGE_VALUES / dimension));
      for (let start = 0; start < listed.length; start += page) {
        const { rows } = await pg.query<{ id: string; vector: string }>(
          `SELECT c.id, ${VECTOR_BYTES} AS vector FROM chunks c WHERE c.workspace_id = $1 AND c.id = ANY($2::uuid[]) AND c.embedding_dimension = $3`,
          [workspaceId, listed.slice(start, start + page).map((row) => row.id), dimension],
        );
        await entry.graph.addMany(rows.map((row) => row.id), rows.map((row) => readVector(row.vector)));
      }
      const pending = entry.pending ?? [];
      entry.pending = undefined;
      for (const change of pending) entry.graph.apply(change);
      if (entry.graph.spent) unlist();
    })()
      // A failed build (the database closed meanwhile) leaves no graph: a later search starts another.
      .catch(unlist)
      .finally(() => this.builds.delete(building));
    this.builds.add(building);
  }
}

function baseKey(workspaceId: string, knowledgeBaseId: string): string {
  return `${workspaceId}/${knowledgeBaseId}`;
}
