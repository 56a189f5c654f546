import { Command } from 'commander';
import { ConfigError, loadClientConfig, loadConfig, loadDotEnv, type Config } from '../core/config.ts';
import { migrate } from '../core/db/migrate.ts';
import { openDb } from '../core/db/open.ts';
import type { Db } from '../core/db/db.ts';
import { createLogger } from '../core/logger.ts';
import { knownScopes, type Scope } from '../features/auth/scopes.ts';
import { createClient } from '../features/access-token-clients/clients.service.ts';
import { createWorkspace, getWorkspace, listWorkspaces } from '../features/workspaces/workspaces.service.ts';
import { ingest, type IngestCommandOptions } from './ingest.ts';

// The server, the workers and the embedder load only for the commands that run them, so that
// `lore ingest` and `lore admin` start light (the server's modules alone cost about 200 MB).
const loadServer = () => import('../server.ts');
const loadEmbedder = () => import('../core/providers/embeddings/create.ts');

function config(): Config {
  loadDotEnv();
  return loadConfig();
}

/** Runs `work` against a migrated database, then closes it. The same services as the HTTP API. */
async function withDb<T>(work: (db: Db) => Promise<T>): Promise<T> {
  const db = await openDb(config());
  try {
    await migrate(db);
    return await work(db);
  } finally {
    await db.close();
  }
}

function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

function parseScopes(list: string): Scope[] {
  const scopes = list.split(',').map((scope) => scope.trim()).filter(Boolean);
  if (scopes.length === 0) throw new Error(`--scopes needs at least one scope; known: ${knownScopes.join(', ')}`);
  const unknown = scopes.filter((scope) => !(knownScopes as readonly string[]).includes(scope));
  if (unknown.length > 0) throw new Error(`Unknown scope ${unknown.join(', ')}; known: ${knownScopes.join(', ')}`);
  return scopes as Scope[];
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Refuses a malformed id before it reaches SQL, where it would surface as a uuid cast error. */
function assertUuid(option: string, value: string): string {
  if (!uuidPattern.test(value)) throw new Error(`${option} must be a UUID, got "${value}"`);
  return value;
}

const program = new Command('lore').description('Answers questions from knowledge bases; ingests content in bulk.');

program
  .command('start')
  .description('Serve the HTTP API (on the embedded database unless DATABASE_URL is set)')
  .action(async () => {
    const settings = config();
    const logger = createLogger(settings);
    const { startServer } = await loadServer();
    const server = await startServer(settings, { logger });
    // Before anything else is awaited: "lore is listening" is already logged, and a SIGTERM that
    // follows it at once (a supervisor, a test) must shut down gracefully, not kill the process.
    const stop = async (signal: string) => {
      logger.info({ signal }, 'shutting down');
      await server.close();
      process.exit(0);
    };
    process.once('SIGINT', () => void stop('SIGINT'));
    process.once('SIGTERM', () => void stop('SIGTERM'));
    // The first start distils builtin-fast's token table: begun now rather than at the first
    // request, which would wait for it. Requests that come meanwhile wait for the same work.
    const { prepareEmbedder } = await loadEmbedder();
    prepareEmbedder(server.context.embedder).then(
      (table) => table?.distilled && logger.info({ path: table.path, seconds: Math.round(table.milliseconds / 1000) }, 'builtin-fast: distilled the token table'),
      (error: unknown) => logger.error({ err: error }, 'builtin-fast: the token table could not be prepared; the first request will try again'),
    );
  });

program
  .command('worker')
  .description('Process ingestion jobs and send webhooks (any number of these may run against one PostgreSQL database)')
  .option('--concurrency <n>', 'jobs processed at once by this process', '1')
  .action(async (options: { concurrency: string }) => {
    const settings = config();
    const logger = createLogger(settings);
    const db = await openDb(settings);
    await migrate(db);
    const [{ startWorkers, startWebhookDispatcher }, { createEmbeddingProvider }] = await Promise.all([loadServer(), loadEmbedder()]);
    const embedder = createEmbeddingProvider(settings);
    const workers = startWorkers(Math.max(1, Number(options.concurrency) || 1), settings, { db, embedder, log: logger });
    const dispatcher = startWebhookDispatcher(settings, { db, log: logger });
    logger.info({ workers: workers.length, engine: db.engine }, 'lore worker started');
    const stop = async (signal: string) => {
      logger.info({ signal }, 'worker stopping: releasing jobs in progress');
      await Promise.all([...workers.map((worker) => worker.stop()), dispatcher.stop()]);
      await embedder.close();
      await db.close();
      process.exit(0);
    };
    process.once('SIGINT', () => void stop('SIGINT'));
    process.once('SIGTERM', () => void stop('SIGTERM'));
  });

program
  .command('prepare')
  .description('Prepare the offline embedder before the first request: builtin-fast distils its token table into MODELS_DIR once (about a minute)')
  .action(async () => {
    const settings = config();
    const { createEmbeddingProvider, prepareEmbedder } = await loadEmbedder();
    const embedder = createEmbeddingProvider(settings);
    try {
      const table = await prepareEmbedder(embedder);
      if (!table) {
        process.stdout.write(`Nothing to prepare for EMBEDDINGS_PROVIDER=${settings.embeddingsProvider}.\n`);
        return;
      }
      const seconds = (table.milliseconds / 1000).toFixed(1);
      process.stdout.write(table.distilled ? `Distilled the token table into ${table.path} in ${seconds} s.\n` : `The token table is ready in ${table.path}.\n`);
    } finally {
      await embedder.close();
    }
  });

program
  .command('migrate')
  .description('Apply the database migrations that are not applied yet')
  .action(async () => {
    const db = await openDb(config());
    try {
      const applied = await migrate(db);
      process.stdout.write(applied.length ? `Applied: ${applied.map((m) => `${m.version} ${m.name}`).join(', ')}\n` : 'Up to date.\n');
    } finally {
      await db.close();
    }
  });

program
  .command('ingest')
  .description('Upload records (JSON, JSON Lines) and documents (PDF, DOCX, HTML, Markdown, text) to a knowledge base through ingestion jobs, with a progress bar')
  .argument('<paths...>', 'JSON files (an adapter payload or an array of records), JSON Lines files (.jsonl, .ndjson) of one record per line, documents, or directories (searched recursively)')
  .requiredOption('--kb <id>', 'the knowledge base to ingest into')
  .option('--adapter <name>', 'the JSON files\' format: generic-json or content-hub (documents go to the files adapter); files sends JSON files as documents too')
  .option('--url <base>', 'the service\'s base URL (or LORE_URL; default: http://HOST:PORT of the server\'s configuration, http://127.0.0.1:3000)')
  .option('--token <token>', 'a bearer token with data-ingestion:read and data-ingestion:write (or LORE_TOKEN)')
  .option('--client-id <id>', 'an access-token client to obtain tokens with, instead of --token (or LORE_CLIENT_ID)')
  .option('--client-secret <secret>', 'the secret of --client-id (or LORE_CLIENT_SECRET)')
  .option('--records-per-job <n>', 'records per job at most (the spec advises 100 to 500); jobs also stay under 1 MB', '500')
  .option('--concurrency <n>', 'jobs in flight at once', '2')
  .action(async (files: string[], options: IngestCommandOptions) => {
    // The server's own configuration, .env included, says where it listens.
    loadDotEnv();
    process.exitCode = await ingest(files, options, loadClientConfig());
  });

const admin = program.command('admin').description('Platform administration, without the HTTP API');
const workspace = admin.command('workspace').description('Workspaces');
workspace
  .command('create <name>')
  .description('Create a workspace')
  .action(async (name: string) => printJson(await withDb((db) => createWorkspace(db, name))));
workspace
  .command('list')
  .description('List workspaces')
  .action(async () => printJson(await withDb((db) => listWorkspaces(db, { limit: 100, offset: 0 }))));

admin
  .command('client')
  .description('Access-token clients')
  .command('create')
  .description('Create an access-token client; prints its secret once')
  .requiredOption('--workspace <id>', 'workspace id')
  .requiredOption('--scopes <list>', `comma-separated scopes (${knownScopes.join(', ')})`)
  .option('--name <name>', 'a name for the client', 'cli')
  .option('--knowledge-bases <ids>', 'comma-separated knowledge-base ids the client is restricted to')
  .action(async (options: { workspace: string; scopes: string; name: string; knowledgeBases?: string }) => {
    assertUuid('--workspace', options.workspace);
    const scopes = parseScopes(options.scopes);
    const knowledgeBaseIds = options.knowledgeBases?.split(',').map((id) => assertUuid('--knowledge-bases', id.trim()));
    const created = await withDb(async (db) => {
      await getWorkspace(db, options.workspace);
      return createClient(db, options.workspace, { name: options.name, scopes, knowledgeBaseIds });
    });
    printJson({ ...created.client, clientSecret: created.clientSecret });
  });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`lore: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
