import type { Logger } from 'pino';
import { buildApp } from './app.ts';
import type { Config } from './core/config.ts';
import type { AppContext } from './core/context.ts';
import type { Db } from './core/db/db.ts';
import { migrate } from './core/db/migrate.ts';
import { openDb } from './core/db/open.ts';
import type { App } from './core/http/app-types.ts';
import { createEmbeddingProvider } from './core/providers/embeddings/create.ts';
import type { EmbeddingProvider } from './core/providers/embeddings/provider.ts';
import { createAnswerGenerators } from './core/providers/generation/create.ts';
import { resolveSecrets } from './core/secrets.ts';
import { releaseOrphanedJobs } from './features/ingestion/queue.ts';
import { IngestionWorker } from './features/ingestion/worker.ts';
import { releaseOrphanedDeliveries } from './features/webhooks/delivery-queue.ts';
import { WebhookDispatcher } from './features/webhooks/dispatcher.ts';
import { firstStart, firstStartBlock } from './features/workspaces/first-start.ts';

export type RunningServer = { app: App; context: AppContext; url: string; close(): Promise<void> };

export type StartOptions = {
  logger: Logger;
  /** Where the first-start block and a generated admin key are printed (stdout by default). */
  print?: (text: string) => void;
};

/** Starts `count` ingestion workers sharing one database and one embedder. */
export function startWorkers(count: number, config: Config, deps: { db: Db; embedder: EmbeddingProvider; log: Logger }): IngestionWorker[] {
  return Array.from({ length: count }, () => {
    const worker = new IngestionWorker(deps, {
      leaseSeconds: config.ingestionLeaseSeconds,
      pollMs: config.ingestionPollMs,
      maxAttempts: config.ingestionMaxAttempts,
      extraction: config.extraction,
    });
    worker.start();
    return worker;
  });
}

/** Starts this process's webhook dispatcher (beside its ingestion workers). */
export function startWebhookDispatcher(config: Config, deps: { db: Db; log: Logger }): WebhookDispatcher {
  const dispatcher = new WebhookDispatcher(deps, { pollMs: config.ingestionPollMs, webhooks: config.webhooks });
  dispatcher.start();
  return dispatcher;
}

/**
 * Opens the database, applies migrations, resolves secrets, seeds a first start, listens, then
 * starts this process's ingestion workers (INGESTION_WORKERS).
 */
export async function startServer(config: Config, options: StartOptions): Promise<RunningServer> {
  const print = options.print ?? ((text: string) => process.stdout.write(`${text}\n`));
  const db = await openDb(config, options.logger);
  let app: App | undefined;
  try {
    const applied = await migrate(db);
    if (applied.length > 0) options.logger.info({ migrations: applied.map((m) => m.name) }, 'applied migrations');
    if (db.engine === 'pglite') {
      const resumed = await releaseOrphanedJobs(db);
      if (resumed > 0) options.logger.info({ jobs: resumed }, 'resuming jobs left by a process that stopped without releasing them');
      const resent = await releaseOrphanedDeliveries(db);
      if (resent > 0) options.logger.info({ deliveries: resent }, 'resending webhook deliveries left in flight by a process that stopped');
    }
    const { secrets, generatedAdminKey } = await resolveSecrets(config);
    const embedder = createEmbeddingProvider(config);
    const workers: IngestionWorker[] = [];
    let dispatcher: WebhookDispatcher | undefined;
    const context: AppContext = {
      config,
      db,
      secrets,
      log: options.logger,
      embedder,
      generators: createAnswerGenerators(config),
      workers: { nudge: () => workers.forEach((worker) => worker.nudge()) },
    };
    app = await buildApp(context, { logger: options.logger });
    app.addHook('onClose', async () => {
      await Promise.all([...workers.map((worker) => worker.stop()), dispatcher?.stop()]);
      await embedder.close();
    });
    await app.listen({ port: config.port, host: config.host });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    if (generatedAdminKey) {
      print(`Generated an admin API key (kept in ${config.dataDir}/secrets.json; shown once):\n  ADMIN_API_KEY=${generatedAdminKey}`);
    }
    const created = await firstStart(context);
    if (created) print(firstStartBlock(created, url));
    workers.push(...startWorkers(config.ingestionWorkers, config, { db, embedder, log: options.logger }));
    // Webhooks go out where jobs run: with INGESTION_WORKERS=0 that is the `lore worker` processes.
    if (workers.length > 0) dispatcher = startWebhookDispatcher(config, { db, log: options.logger });
    options.logger.info({ url, engine: db.engine, ingestionWorkers: workers.length }, 'lore is listening');
    const running = app;
    return {
      app: running,
      context,
      url,
      async close() {
        await running.close();
        await db.close();
      },
    };
  } catch (error) {
    await app?.close().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw error;
  }
}
