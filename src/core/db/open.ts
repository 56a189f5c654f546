import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db } from './db.ts';

/**
 * Opens the engine the configuration names: PostgreSQL with `DATABASE_URL`, else embedded PGlite.
 * `log` hears of the embedded engine's checkpoints (embedded-checkpoint.ts).
 */
export async function openDb(config: Pick<Config, 'databaseUrl' | 'databasePoolSize' | 'dataDir' | 'ingestionLeaseSeconds'>, log?: Logger): Promise<Db> {
  // Each engine's driver loads only when it is used: PGlite's WebAssembly build is large.
  if (config.databaseUrl) {
    return (await import('./postgres.ts')).openPostgres({
      connectionString: config.databaseUrl,
      poolSize: config.databasePoolSize,
      // No transaction of lore waits on anything but the database, so a session idle in one for
      // a whole lease is a frozen process (SIGSTOP, a VM pause): ending it releases its row locks
      // for the worker that takes the job over. At least 5 s, so that a busy event loop (a 30 MB
      // JSON body parses in about 0.3 s) never ends a healthy transaction.
      idleInTransactionTimeoutMs: Math.max(config.ingestionLeaseSeconds, 5) * 1000,
    });
  }
  return (await import('./pglite.ts')).openPglite(`${config.dataDir}/pgdata`, { log });
}
