import type { VectorGraphs, VectorMatch, VectorSearchRequest } from './pglite-vectors.ts';

/** The result of one statement: its rows and how many rows it touched. */
export type QueryResult<Row> = { rows: Row[]; rowCount: number };

/** How a statement runs, beside its text and values. */
export type QueryOptions = {
  /**
   * Parse and plan it once per connection instead of at every call: a named prepared statement on
   * PostgreSQL, whose server then chooses between a generic plan and custom ones as for any
   * prepared statement. For statements of the query path whose text does not vary with their
   * values, run at every question. On PGlite a named statement of its one session, parsed once
   * and then only bound and executed (`runNamed` in pglite-worker.ts).
   */
  prepare?: boolean;
  /**
   * A statement a visitor's question waits on (the query path). On PGlite, whose one connection
   * makes it wait for a write transaction in progress, a job keeps its transactions to a record
   * while such statements come (see `lastQuestion`); other statements, a job's own or a client's
   * polls of it, do not shorten them.
   */
  question?: boolean;
};

/**
 * Anything that runs parameterized SQL: the database itself or an open transaction. A
 * `Float32Array` value is bound as a pgvector `vector` in binary (`vector-parameter.ts`); the
 * statement casts it to `vector`.
 */
export interface Queryable {
  query<Row = Record<string, unknown>>(text: string, values?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<Row>>;
  /** Runs SQL text that may hold several statements and takes no parameters (migrations). */
  exec(text: string): Promise<void>;
}

/**
 * The one database interface of lore. Both engines speak PostgreSQL SQL; the adapters only differ
 * in how they connect and run transactions.
 */
export interface Db extends Queryable {
  readonly engine: 'pglite' | 'postgres';
  /**
   * Set when every connection starts with pgvector's iterative HNSW scan (relaxed order) and this
   * ef_search, so that a vector search of at most this many rows needs no transaction of its own
   * to set them.
   */
  readonly vectorSearchDefaults?: { efSearch: number };
  /** PGlite only: when (`performance.now()`) a statement marked `question` was last sent; -Infinity before any was. */
  readonly lastQuestion?: () => number;
  /**
   * PGlite only: the nearest chunks from the engine's own vector index (pglite-vectors.ts), which
   * replaces pgvector's HNSW index there. Without it, vector search is SQL over pgvector's index.
   */
  readonly searchVectors?: (request: VectorSearchRequest) => Promise<VectorMatch[]>;
  /**
   * PGlite only: how many of its vector graphs are built and being built (a knowledge base is
   * scanned exactly until its graph is built); with `settled`, once the builds in flight have ended.
   */
  readonly vectorGraphs?: (options?: { settled?: boolean }) => Promise<VectorGraphs>;
  /**
   * PGlite only: what /readyz says while DATA_DIR's disk is full (its free bytes), from the moment
   * a statement met it full until it has room again (disk-full.ts); undefined otherwise.
   */
  readonly diskFull?: () => Promise<string | undefined>;
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
