import pg from 'pg';
import type { Db, Queryable, QueryResult } from './db.ts';

// COUNT(*) and other int8 values come back as strings by default; every count lore reads fits
// in a double, and PGlite returns numbers, so both engines answer alike.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

function wrap(target: pg.Pool | pg.PoolClient): Queryable {
  return {
    async query<Row>(text: string, values: readonly unknown[] = []): Promise<QueryResult<Row>> {
      const result = await target.query(text, values as unknown[]);
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
    },
    async exec(text: string): Promise<void> {
      await target.query(text);
    },
  };
}

/** The server engine: a connection pool to PostgreSQL 15+ with pgvector. */
export async function openPostgres(connectionString: string, poolSize: number): Promise<Db> {
  const pool = new pg.Pool({ connectionString, max: poolSize });
  // An idle client that loses its connection emits here; without a listener the process would exit.
  pool.on('error', () => undefined);
  await pool.query('SELECT 1');
  const root = wrap(pool);
  return {
    engine: 'postgres',
    query: root.query,
    exec: root.exec,
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await work(wrap(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}
