import type { Logger } from 'pino';
import { buildApp } from './app.ts';
import type { Config } from './core/config.ts';
import type { AppContext } from './core/context.ts';
import { migrate } from './core/db/migrate.ts';
import { openDb } from './core/db/open.ts';
import type { App } from './core/http/app-types.ts';
import { resolveSecrets } from './core/secrets.ts';
import { firstStart, firstStartBlock } from './features/workspaces/first-start.ts';

export type RunningServer = { app: App; context: AppContext; url: string; close(): Promise<void> };

export type StartOptions = {
  logger: Logger;
  /** Where the first-start block and a generated admin key are printed (stdout by default). */
  print?: (text: string) => void;
};

/** Opens the database, applies migrations, resolves secrets, seeds a first start, then listens. */
export async function startServer(config: Config, options: StartOptions): Promise<RunningServer> {
  const print = options.print ?? ((text: string) => process.stdout.write(`${text}\n`));
  const db = await openDb(config);
  try {
    const applied = await migrate(db);
    if (applied.length > 0) options.logger.info({ migrations: applied.map((m) => m.name) }, 'applied migrations');
    const { secrets, generatedAdminKey } = await resolveSecrets(config);
    const context: AppContext = { config, db, secrets, log: options.logger };
    const app = await buildApp(context, { logger: options.logger });
    await app.listen({ port: config.port, host: config.host });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    if (generatedAdminKey) {
      print(`Generated an admin API key (kept in ${config.dataDir}/secrets.json; shown once):\n  ADMIN_API_KEY=${generatedAdminKey}`);
    }
    const created = await firstStart(context);
    if (created) print(firstStartBlock(created, url));
    options.logger.info({ url, engine: db.engine }, 'lore is listening');
    return {
      app,
      context,
      url,
      async close() {
        await app.close();
        await db.close();
      },
    };
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
}
