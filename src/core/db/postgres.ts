import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Db, Queryable, QueryOptions, QueryResult } from './db.ts';
import { translateDbError } from './unavailable.ts';
import { vectorBytes } from './vector-parameter.ts';
import { VECTOR_SEARCH_DEFAULTS } from './vector-search-defaults.ts';

// COUNT(*) and other int8 values come back as strings by default; every count lore reads fits
// in a double, and PGlite returns numbers, so both engines answer alike.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

// While the server is unreachable a request should fail fast with a 503, not wait for a slot
// behind others that are waiting too; a healthy server hands out connections in a few ms.
const CONNECT_TIMEOUT_MS = 5_000;

export type PostgresOptions = {
  connectionString: string;
  poolSize: number;
  /**
   * The server ends a session left idle inside a transaction this long (a stalled or frozen
   * process), so that the row locks it holds cannot keep others waiting indefinitely.
   */
  idleInTransactionTimeoutMs: number;
};

/** The driver sends a Buffer as a binary parameter, which the statement's cast reads with `vector_recv`. */
function bound(value: unknown): unknown {
  if (!(value instanceof Float32Array)) return value;
  const bytes = vectorBytes(value);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

// Statement names by text: a name is a hash of the text, so that one text has one name on every
// connection, and the driver, which remembers the names each connection has parsed, sends Parse
// only the first time.
const statementNames = new Map<string, string>();

function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `lore_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return name;
}

function wrap(target: pg.Pool | pg.PoolClient): Queryable {
  return {
    async query<Row>(text: string, values: readonly unknown[] = [], options?: QueryOptions): Promise<QueryResult<Row>> {
      const config = { text, values: values.map(bound), ...(options?.prepare ? { name: statementName(text) } : {}) };
      const result = await target.query(config).catch(translateDbError);
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
    },
    async exec(text: string): Promise<void> {
      await target.query(text).catch(translateDbError);
    },
  };
}

/** The server engine: a connection pool to PostgreSQL 15+ with pgvector. */
export async function openPostgres(options: PostgresOptions): Promise<Db> {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.poolSize,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    idle_in_transaction_session_timeout: options.idleInTransactionTimeoutMs,
    // Every connection starts with VECTOR_SEARCH_DEFAULTS. Settings of an extension that is not
    // loaded yet are kept by the server until it loads.
    options: `-c hnsw.iterative_scan=relaxed_order -c hnsw.ef_search=${VECTOR_SEARCH_DEFAULTS.efSearch}`,
  });
  // An idle client that loses its connection emits here; without a listener the process would
  // exit. The pool drops that client and opens a new connection when one is next needed.
  pool.on('error', () => undefined);
  await pool.query('SELECT 1').catch(translateDbError);
  const root = wrap(pool);
  return {
    engine: 'postgres',
    vectorSearchDefaults: VECTOR_SEARCH_DEFAULTS,
    query: root.query,
    exec: root.exec,
    async transaction(work) {
      const client = await pool.connect().catch(translateDbError);
      // A checked-out client has no listener of the pool's: a connection the server terminates
      // mid-transaction (a restart) emits 'error', which would otherwise end the process.
      let lost: Error | undefined;
      const onError = (error: Error) => {
        lost = error;
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN').catch(translateDbError);
        const result = await work(wrap(client));
        await client.query('COMMIT').catch(translateDbError);
        return result;
      } catch (error) {
        if (!lost) await client.query('ROLLBACK').catch((rollbackError: Error) => (lost = rollbackError));
        throw error;
      } finally {
        client.removeListener('error', onError);
        // A client whose connection broke is destroyed rather than returned to the pool.
        client.release(lost);
      }
    },
    close: () => pool.end(),
  };
}
