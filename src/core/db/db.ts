/** The result of one statement: its rows and how many rows it touched. */
export type QueryResult<Row> = { rows: Row[]; rowCount: number };

/**
 * Anything that runs parameterized SQL: the database itself or an open transaction. A
 * `Float32Array` value is bound as a pgvector `vector` in binary (`vector-parameter.ts`); the
 * statement casts it to `vector`.
 */
export interface Queryable {
  query<Row = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<QueryResult<Row>>;
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
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
