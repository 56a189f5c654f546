import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Db } from './db.ts';

const migrationsDir = fileURLToPath(new URL('../../../migrations/', import.meta.url));

export type Migration = { version: number; name: string; sql: string };

let cached: Promise<Migration[]> | undefined;

/** The numbered SQL files in `migrations/`, in order (read once per process). */
export function loadMigrations(): Promise<Migration[]> {
  cached ??= readMigrations();
  return cached;
}

async function readMigrations(): Promise<Migration[]> {
  const files = (await readdir(migrationsDir)).filter((file) => /^\d{3}_[\w-]+\.sql$/.test(file)).sort();
  return Promise.all(
    files.map(async (file) => ({
      version: Number(file.slice(0, 3)),
      name: file.slice(4, -4),
      sql: await readFile(migrationsDir + file, 'utf8'),
    })),
  );
}

// An arbitrary constant: processes starting together take turns on this advisory lock, so each
// migration runs exactly once however many API and worker processes start at the same time.
const MIGRATION_LOCK = 7_310_451;

/** Applies the migrations not yet recorded, each in its own transaction. Returns the applied ones. */
export async function migrate(db: Db): Promise<Migration[]> {
  const migrations = await loadMigrations();
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
  });
  const applied: Migration[] = [];
  for (const migration of migrations) {
    const ran = await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      const done = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [migration.version]);
      if (done.rowCount > 0) return false;
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      return true;
    });
    if (ran) applied.push(migration);
  }
  return applied;
}

/** Whether every migration shipped with this build is applied (for /readyz). */
export async function pendingMigrations(db: Db): Promise<number> {
  const migrations = await loadMigrations();
  const { rows } = await db.query<{ version: number }>('SELECT version FROM schema_migrations');
  const done = new Set(rows.map((row) => row.version));
  return migrations.filter((migration) => !done.has(migration.version)).length;
}
