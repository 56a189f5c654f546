/**
 * PGlite has no autovacuum: after bulk changes its statistics go stale (full-text search slowed
 * from 0.65 ms to 2.2 ms p50 after a large import) and no visibility map is set, so index-only
 * scans of the postings visit the heap. This applies PostgreSQL's own autovacuum rule to the
 * tables that ingestion and deletion change in bulk, on demand.
 */
import type { Db } from './db.ts';

/** The tables bulk ingestion and deletion change; the others change a row at a time. */
export const BULK_TABLES = ['chunks', 'entries', 'keyword_postings', 'keyword_lexemes'] as const;

/** A table's counters from `pg_stat_user_tables`, and its row estimate (-1: never analyzed). */
export type TableActivity = { table: string; tuples: number; dead: number; modified: number; inserted: number };

/**
 * PostgreSQL's autovacuum defaults (autovacuum_vacuum_threshold 50 and scale factor 0.2,
 * autovacuum_vacuum_insert_threshold 1000 and scale factor 0.2, autovacuum_analyze_threshold 50
 * and scale factor 0.1), so the embedded engine tidies exactly when a server would.
 */
const RULE = { base: 50, vacuumScale: 0.2, insertBase: 1000, insertScale: 0.2, analyzeScale: 0.1 };

/** What a table is due for: `vacuum` (which analyzes too), `analyze`, or nothing. */
export function dueAction(activity: TableActivity): 'vacuum' | 'analyze' | undefined {
  const tuples = Math.max(activity.tuples, 0);
  if (activity.dead > RULE.base + RULE.vacuumScale * tuples) return 'vacuum';
  // Inserts alone leave no dead rows, but only a vacuum marks their pages all-visible for index-only scans.
  if (activity.inserted > RULE.insertBase + RULE.insertScale * tuples) return 'vacuum';
  if (activity.modified > RULE.base + RULE.analyzeScale * tuples) return 'analyze';
  return undefined;
}

/**
 * Vacuums (with ANALYZE) or analyzes each bulk table that is due, one table at a time so that
 * questions between them are not held for the whole round. Returns what was done.
 */
export async function vacuumWhereDue(db: Db): Promise<{ vacuumed: string[]; analyzed: string[] }> {
  // Counters reach pg_stat_* when a backend flushes them; PGlite's one backend flushes on demand.
  await db.query('SELECT pg_stat_force_next_flush()');
  const { rows } = await db.query<TableActivity>(
    `SELECT s.relname AS table, c.reltuples::float8 AS tuples, s.n_dead_tup::float8 AS dead,
       s.n_mod_since_analyze::float8 AS modified, s.n_ins_since_vacuum::float8 AS inserted
     FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
     WHERE s.schemaname = current_schema() AND s.relname = ANY($1::text[])
     ORDER BY s.relname`,
    [BULK_TABLES],
  );
  const done = { vacuumed: [] as string[], analyzed: [] as string[] };
  for (const activity of rows) {
    const action = dueAction(activity);
    if (action === 'vacuum') await db.exec(`VACUUM (ANALYZE) ${activity.table}`);
    else if (action === 'analyze') await db.exec(`ANALYZE ${activity.table}`);
    if (action) done[action === 'vacuum' ? 'vacuumed' : 'analyzed'].push(activity.table);
  }
  return done;
}
