import type { Config } from '../config.ts';
import type { Db } from './db.ts';

/** Opens the engine the configuration names: PostgreSQL with `DATABASE_URL`, else embedded PGlite. */
export async function openDb(config: Pick<Config, 'databaseUrl' | 'databasePoolSize' | 'dataDir'>): Promise<Db> {
  // Each engine's driver loads only when it is used: PGlite's WebAssembly build is large.
  if (config.databaseUrl) return (await import('./postgres.ts')).openPostgres(config.databaseUrl, config.databasePoolSize);
  return (await import('./pglite.ts')).openPglite(`${config.dataDir}/pgdata`);
}
