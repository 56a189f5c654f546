import proxyAddr from '@fastify/proxy-addr';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import dotenv from 'dotenv';
import { availableParallelism } from 'node:os';
import { Type, type Static } from 'typebox';

/**
 * Every environment variable lore reads, with its default. This is the only module that reads
 * `process.env`; everything else receives the frozen `Config` built here.
 */
/** A string variable with a fixed set of values (`enum` reports better than a union of literals). */
function choice<const T extends string>(values: readonly T[], defaultValue: T, description?: string) {
  return Type.Unsafe<T>({ type: 'string', enum: values, default: defaultValue, description });
}

const EnvSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000, description: 'HTTP port.' }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1', description: 'Interface to listen on; 0.0.0.0 in containers.' }),
  DATA_DIR: Type.String({ minLength: 1, default: './data', description: 'Directory of the embedded database and its generated secrets.' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://', description: 'PostgreSQL server to use instead of the embedded engine.' })),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10, description: 'Connections per process on PostgreSQL.' }),
  ADMIN_API_KEY: Type.Optional(Type.String({ minLength: 16, description: 'Bearer key of the platform administration API.' })),
  TOKEN_SECRET: Type.Optional(Type.String({ minLength: 32, description: 'HMAC secret that signs access tokens.' })),
  TOKEN_TTL_SECONDS: Type.Integer({ minimum: 60, maximum: 86400, default: 3600, description: 'Access-token lifetime.' }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://', description: 'Redis for rate limits shared by several API processes.' })),
  LOG_LEVEL: choice(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  LOG_FORMAT: choice(['auto', 'json', 'pretty'], 'auto', 'auto: pretty in a terminal, JSON otherwise.'),
  EMBEDDINGS_PROVIDER: choice(['builtin', 'builtin-fast', 'openai'], 'builtin-fast', 'Where embedding vectors come from.'),
  MODELS_DIR: Type.Optional(
    Type.String({ minLength: 1, description: 'Where builtin-fast keeps the token table it distils at its first use; default: models/ in DATA_DIR.' }),
  ),
  LLM_PROVIDER: choice(['extractive', 'openai'], 'extractive', 'What composes answers.'),
  OPENAI_BASE_URL: Type.String({ format: 'uri', default: 'https://api.openai.com/v1' }),
  OPENAI_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
  EMBEDDINGS_THREADS: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 64, description: 'Worker threads of the builtin embedder; default: one per core.' }),
  ),
  EMBEDDINGS_BATCH_SIZE: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 2048, description: 'Texts per embedding batch; default: 16 for builtin, 256 for openai.' }),
  ),
  EMBEDDINGS_TIMEOUT_MS: Type.Integer({ minimum: 1, maximum: 600000, default: 30000, description: 'Time limit of one embeddings API request.' }),
  EMBEDDINGS_MAX_RETRIES: Type.Integer({ minimum: 0, maximum: 20, default: 5, description: 'Retries of a failed embeddings API request.' }),
  OPENAI_EMBEDDINGS_MODEL: Type.String({ minLength: 1, default: 'text-embedding-3-small' }),
  OPENAI_EMBEDDINGS_DIMENSIONS: Type.Optional(
    // pgvector stores at most 16,000 dimensions: a larger size would start and then fail every job.
    Type.Integer({ minimum: 1, maximum: 16000, description: 'Vector size asked of the embeddings API (`dimensions`); default: the model\'s own.' }),
  ),
  INGESTION_WORKERS: Type.Integer({
    minimum: 0,
    maximum: 32,
    default: 1,
    description: 'Ingestion workers inside each API process; 0 leaves jobs to `lore worker` processes.',
  }),
  INGESTION_LEASE_SECONDS: Type.Integer({ minimum: 2, maximum: 3600, default: 30, description: 'How long a silent worker keeps its job.' }),
  INGESTION_POLL_MS: Type.Integer({ minimum: 10, maximum: 60000, default: 500, description: 'How often an idle worker looks for jobs.' }),
  INGESTION_MAX_ATTEMPTS: Type.Integer({ minimum: 1, maximum: 100, default: 5, description: 'Claims of one job before it is failed.' }),
  EXTRACTION_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 600000,
    default: 20000,
    description: 'Time limit of extracting one uploaded document (PDF, DOCX, HTML); past it the file fails.',
  }),
  EXTRACTION_MEMORY_LIMIT_MB: Type.Integer({
    minimum: 64,
    maximum: 16384,
    default: 512,
    description: 'Heap of the thread that extracts uploaded documents; a file that needs more fails.',
  }),
  EXTRACTION_INFLATED_LIMIT_MB: Type.Number({
    exclusiveMinimum: 0,
    maximum: 16384,
    default: 128,
    description: 'Bytes one uploaded document may inflate to (a PDF\'s compressed streams, a DOCX\'s ZIP entries); past it the file fails.',
  }),
  JSON_BODY_LIMIT_MB: Type.Number({ exclusiveMinimum: 0, maximum: 1024, default: 30, description: 'Largest JSON body of an ingestion job.' }),
  MULTIPART_LIMIT_MB: Type.Number({ exclusiveMinimum: 0, maximum: 1024, default: 30, description: 'Largest multipart upload of an ingestion job.' }),
  OPENAI_CHAT_MODEL: Type.String({ minLength: 1, default: 'gpt-4o-mini', description: 'Chat model of the openai answer generator.' }),
  LLM_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600000, default: 30000, description: 'Time limit of one chat-completions request.' }),
  LLM_MAX_RETRIES: Type.Integer({ minimum: 0, maximum: 10, default: 2, description: 'Retries of a chat-completions request after a 429, a 5xx or a network error.' }),
  RATE_LIMIT_WORKSPACE_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 1000000, default: 6000, description: 'Queries per minute of one workspace.' }),
  RATE_LIMIT_IP_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 1000000, default: 60, description: 'Anonymous queries per minute from one client IP.' }),
  RATE_LIMIT_SESSION_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 1000000, default: 30, description: 'Anonymous queries per minute in one session.' }),
  TRUST_PROXY: Type.String({
    minLength: 1,
    default: 'false',
    description: 'Addresses or CIDR ranges of the reverse proxies in front of lore (comma-separated): the client IP is the last X-Forwarded-For address none of them appended.',
  }),
  TOOLS_ALLOW_HTTP: Type.Boolean({ default: false, description: 'Accept plain http URLs for experience tools (development only).' }),
  TOOLS_ALLOW_PRIVATE_TARGETS: Type.Boolean({
    default: false,
    description: 'Let experience tools reach loopback, private, link-local and metadata addresses (development and tests only).',
  }),
  TOOLS_MATCH_COSINE: Type.Optional(
    Type.Number({
      minimum: -1,
      maximum: 1,
      description: "Similarity to a tool's example from which a question triggers the tool (extractive generator); default: the encoder's own.",
    }),
  ),
  WEBHOOKS_ALLOW_HTTP: Type.Boolean({ default: false, description: 'Accept plain http webhook URLs (development only).' }),
  WEBHOOKS_ALLOW_PRIVATE_TARGETS: Type.Boolean({
    default: false,
    description: 'Let webhooks reach loopback, private, link-local and metadata addresses (development and tests only).',
  }),
  WEBHOOKS_RETRY_SCHEDULE: Type.String({
    pattern: '^\\s*\\d+(ms|s|m|h)\\s*(,\\s*\\d+(ms|s|m|h)\\s*)*$',
    default: '5s,5m,30m,2h,5h,10h,10h',
    description: 'Waits before each retry of a failed webhook delivery (the first attempt is immediate); units ms, s, m, h.',
  }),
  WEBHOOKS_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120000, default: 15000, description: 'Time limit of one webhook delivery attempt.' }),
  BOOTSTRAP: choice(
    ['auto', 'never'],
    'auto',
    'auto: on an empty embedded database, create a default workspace, knowledge base, experience and client.',
  ),
});

type Env = Static<typeof EnvSchema>;

/** What `lore ingest` reads: where the service is (its own LORE_URL, else the server's HOST and PORT) and how to sign in. */
const ClientEnvSchema = Type.Object({
  LORE_URL: Type.Optional(
    Type.String({ format: 'uri', pattern: '^https?://', description: 'The service `lore ingest` calls; default: http://HOST:PORT of the server\'s own variables.' }),
  ),
  LORE_TOKEN: Type.Optional(Type.String({ minLength: 1, description: 'A bearer token for `lore ingest`.' })),
  LORE_CLIENT_ID: Type.Optional(Type.String({ minLength: 1, description: 'An access-token client `lore ingest` obtains tokens with.' })),
  LORE_CLIENT_SECRET: Type.Optional(Type.String({ minLength: 1, description: 'The secret of LORE_CLIENT_ID.' })),
  HOST: EnvSchema.properties.HOST,
  PORT: EnvSchema.properties.PORT,
});

type ClientEnv = Static<typeof ClientEnvSchema>;

export type Config = Readonly<{
  port: number;
  host: string;
  dataDir: string;
  modelsDir: string;
  databaseUrl: string | undefined;
  databasePoolSize: number;
  adminApiKey: string | undefined;
  tokenSecret: string | undefined;
  tokenTtlSeconds: number;
  redisUrl: string | undefined;
  logLevel: string;
  logFormat: 'json' | 'pretty';
  embeddingsProvider: 'builtin' | 'builtin-fast' | 'openai';
  llmProvider: 'extractive' | 'openai';
  openaiBaseUrl: string;
  openaiApiKey: string | undefined;
  embeddingsThreads: number;
  embeddingsBatchSize: number;
  embeddingsTimeoutMs: number;
  embeddingsMaxRetries: number;
  openaiEmbeddingsModel: string;
  openaiEmbeddingsDimensions: number | undefined;
  /** TOOLS_MATCH_COSINE: replaces the encoder's `toolCosine` when set. */
  toolsMatchCosine: number | undefined;
  openaiChatModel: string;
  llmTimeoutMs: number;
  llmMaxRetries: number;
  rateLimits: Readonly<{ workspacePerMinute: number; ipPerMinute: number; sessionPerMinute: number }>;
  /** The proxies whose X-Forwarded-For is believed (addresses, CIDR ranges, proxy-addr's names); false: none. */
  trustProxy: false | readonly string[];
  bootstrap: 'auto' | 'never';
  ingestionWorkers: number;
  ingestionLeaseSeconds: number;
  ingestionPollMs: number;
  ingestionMaxAttempts: number;
  /** The bounds of extracting one uploaded document that an operator sets (the others are in adapters/files/bounds.ts). */
  extraction: Readonly<{ timeoutMs: number; memoryMb: number; inflatedBytes: number }>;
  jsonBodyLimitBytes: number;
  multipartLimitBytes: number;
  tools: Readonly<{ allowHttp: boolean; allowPrivateTargets: boolean }>;
  webhooks: Readonly<{ allowHttp: boolean; allowPrivateTargets: boolean; retryScheduleMs: readonly number[]; timeoutMs: number }>;
}>;

/** The configuration of `lore ingest`, a client of the service. */
export type ClientConfig = Readonly<{
  /** The service's base URL, without a trailing slash; undefined with PORT=0, a port only the server knows. */
  serviceUrl: string | undefined;
  /** Which setting gave `serviceUrl`, for messages. */
  serviceUrlFrom: 'LORE_URL' | 'HOST and PORT' | 'the default';
  token: string | undefined;
  clientId: string | undefined;
  clientSecret: string | undefined;
}>;

/** Thrown when the environment is invalid; the message names every bad variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const durationUnits = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

const proxyForms = 'give the addresses or CIDR ranges of the proxies in front of lore, comma-separated (e.g. TRUST_PROXY=10.0.0.2 or TRUST_PROXY=10.0.0.0/8,127.0.0.1)';

/**
 * TRUST_PROXY as Fastify's `trustProxy` list, or the problems with it. `true` (trust every hop)
 * and a hop count are refused: behind a proxy that appends the address it was reached from, both
 * believe what the client wrote itself, or anyone reaching lore past the proxy (Fastify 5.12
 * ignores hop counts for that reason), so a visitor could pick its own per-IP budget.
 */
function parseTrustProxy(value: string): { trusted: false | string[]; problems: string[] } {
  const trimmed = value.trim();
  if (trimmed === 'false') return { trusted: false, problems: [] };
  if (trimmed === 'true') {
    return { trusted: false, problems: [`TRUST_PROXY: true would trust every address, so any client could pick its own by sending X-Forwarded-For; ${proxyForms}`] };
  }
  if (/^\d+$/.test(trimmed)) {
    return { trusted: false, problems: [`TRUST_PROXY: a hop count (${trimmed}) cannot tell a proxy from a client that reaches lore directly; ${proxyForms}`] };
  }
  const trusted = trimmed.split(',').map((item) => item.trim());
  const problems = trusted
    .filter((item) => {
      try {
        proxyAddr.compile(item);
        return false;
      } catch {
        return true;
      }
    })
    .map((item) => `TRUST_PROXY: ${item} is not an IP address, a CIDR range or one of loopback, linklocal, uniquelocal; ${proxyForms}`);
  return { trusted, problems };
}

/** `5s,5m,2h` → milliseconds each; the schema's pattern has checked the syntax. */
function parseDurations(list: string): number[] {
  return list.split(',').map((item) => {
    const [, amount, unit] = /^\s*(\d+)(ms|s|m|h)\s*$/.exec(item)!;
    return Number(amount) * durationUnits[unit as keyof typeof durationUnits];
  });
}

const secretVariables = new Set(['ADMIN_API_KEY', 'TOKEN_SECRET', 'OPENAI_API_KEY', 'DATABASE_URL', 'REDIS_URL', 'LORE_TOKEN', 'LORE_CLIENT_SECRET']);

const ajv = new Ajv({ allErrors: true, coerceTypes: true, useDefaults: true, strict: false });
addFormats.default(ajv);
const validateEnv = ajv.compile<Env>(EnvSchema);
const validateClientEnv = ajv.compile<ClientEnv>(ClientEnvSchema);

/** The variables of a schema that are set (an empty one is not), and every problem the schema finds in them, defaults filled in. */
function readVariables(schema: typeof EnvSchema | typeof ClientEnvSchema, validate: ValidateFunction, environment: Record<string, string | undefined>) {
  const env: Record<string, unknown> = {};
  for (const name of Object.keys(schema.properties)) {
    const value = environment[name];
    // An empty variable means "not set", as in most deployment tooling.
    if (value !== undefined && value !== '') env[name] = value;
  }
  const set = new Set(Object.keys(env));
  const problems: string[] = [];
  if (!validate(env)) {
    for (const error of validate.errors ?? []) {
      const name = error.instancePath.replace(/^\//, '') || String(error.params.missingProperty ?? '');
      // Secrets, and URLs that may carry a password, are never echoed into logs.
      const got = name in env && !secretVariables.has(name) ? ` (got ${JSON.stringify(env[name])})` : '';
      const allowed = error.keyword === 'enum' ? `: ${(error.params.allowedValues as string[]).join(', ')}` : '';
      problems.push(`${name}: ${error.message ?? 'is invalid'}${allowed}${got}`);
    }
  }
  return { env, set, problems };
}

/** Reads `.env` (when present) into `process.env` without overriding variables already set. */
export function loadDotEnv(path = '.env'): void {
  dotenv.config({ path, quiet: true });
}

/** Builds the frozen configuration from an environment, reporting every bad variable at once. */
export function loadConfig(environment: Record<string, string | undefined> = process.env, isTerminal = Boolean(process.stdout.isTTY)): Config {
  const { env, problems } = readVariables(EnvSchema, validateEnv, environment);
  // Rules across variables are checked even when single variables are bad: every problem at once.
  if (env.DATABASE_URL && !env.TOKEN_SECRET) {
    problems.push('TOKEN_SECRET: is required with DATABASE_URL, because every API process must sign tokens with the same secret');
  }
  const trustProxy = typeof env.TRUST_PROXY === 'string' ? parseTrustProxy(env.TRUST_PROXY) : { trusted: false as const, problems: [] };
  problems.push(...trustProxy.problems);
  if (problems.length > 0) throw new ConfigError([...new Set(problems)]);
  // Every variable passed the schema above, with defaults filled in.
  const valid = env as Env;
  return Object.freeze({
    port: valid.PORT,
    host: valid.HOST,
    dataDir: valid.DATA_DIR,
    modelsDir: valid.MODELS_DIR ?? `${valid.DATA_DIR}/models`,
    databaseUrl: valid.DATABASE_URL,
    databasePoolSize: valid.DATABASE_POOL_SIZE,
    adminApiKey: valid.ADMIN_API_KEY,
    tokenSecret: valid.TOKEN_SECRET,
    tokenTtlSeconds: valid.TOKEN_TTL_SECONDS,
    redisUrl: valid.REDIS_URL,
    logLevel: valid.LOG_LEVEL,
    logFormat: valid.LOG_FORMAT === 'auto' ? (isTerminal ? 'pretty' : 'json') : valid.LOG_FORMAT,
    embeddingsProvider: valid.EMBEDDINGS_PROVIDER,
    llmProvider: valid.LLM_PROVIDER,
    openaiBaseUrl: valid.OPENAI_BASE_URL,
    openaiApiKey: valid.OPENAI_API_KEY,
    embeddingsThreads: valid.EMBEDDINGS_THREADS ?? availableParallelism(),
    // bench/history.md ("Embedder"): builtin batches of 8, 16 and 32 embed at the same rate per
    // CPU-second while memory grows with the batch. The OpenAI API takes up to 2048 inputs per
    // request; 256 keeps one request well under its size limits.
    embeddingsBatchSize: valid.EMBEDDINGS_BATCH_SIZE ?? (valid.EMBEDDINGS_PROVIDER === 'openai' ? 256 : 16),
    embeddingsTimeoutMs: valid.EMBEDDINGS_TIMEOUT_MS,
    embeddingsMaxRetries: valid.EMBEDDINGS_MAX_RETRIES,
    openaiEmbeddingsModel: valid.OPENAI_EMBEDDINGS_MODEL,
    openaiEmbeddingsDimensions: valid.OPENAI_EMBEDDINGS_DIMENSIONS,
    toolsMatchCosine: valid.TOOLS_MATCH_COSINE,
    openaiChatModel: valid.OPENAI_CHAT_MODEL,
    llmTimeoutMs: valid.LLM_TIMEOUT_MS,
    llmMaxRetries: valid.LLM_MAX_RETRIES,
    rateLimits: Object.freeze({
      workspacePerMinute: valid.RATE_LIMIT_WORKSPACE_PER_MINUTE,
      ipPerMinute: valid.RATE_LIMIT_IP_PER_MINUTE,
      sessionPerMinute: valid.RATE_LIMIT_SESSION_PER_MINUTE,
    }),
    trustProxy: trustProxy.trusted && Object.freeze(trustProxy.trusted),
    bootstrap: valid.BOOTSTRAP,
    ingestionWorkers: valid.INGESTION_WORKERS,
    ingestionLeaseSeconds: valid.INGESTION_LEASE_SECONDS,
    ingestionPollMs: valid.INGESTION_POLL_MS,
    ingestionMaxAttempts: valid.INGESTION_MAX_ATTEMPTS,
    extraction: Object.freeze({
      timeoutMs: valid.EXTRACTION_TIMEOUT_MS,
      memoryMb: valid.EXTRACTION_MEMORY_LIMIT_MB,
      inflatedBytes: Math.round(valid.EXTRACTION_INFLATED_LIMIT_MB * 1024 * 1024),
    }),
    jsonBodyLimitBytes: Math.round(valid.JSON_BODY_LIMIT_MB * 1024 * 1024),
    multipartLimitBytes: Math.round(valid.MULTIPART_LIMIT_MB * 1024 * 1024),
    tools: Object.freeze({ allowHttp: valid.TOOLS_ALLOW_HTTP, allowPrivateTargets: valid.TOOLS_ALLOW_PRIVATE_TARGETS }),
    webhooks: Object.freeze({
      allowHttp: valid.WEBHOOKS_ALLOW_HTTP,
      allowPrivateTargets: valid.WEBHOOKS_ALLOW_PRIVATE_TARGETS,
      retryScheduleMs: Object.freeze(parseDurations(valid.WEBHOOKS_RETRY_SCHEDULE)),
      timeoutMs: valid.WEBHOOKS_TIMEOUT_MS,
    }),
  } as Config);
}

/** The address to call for a server listening on `host`: a wildcard address (0.0.0.0, ::) is not one to connect to, so its loopback is. */
function connectableHost(host: string): string {
  const loopback = host === '0.0.0.0' ? '127.0.0.1' : host === '::' || host === '[::]' ? '::1' : host;
  return loopback.includes(':') && !loopback.startsWith('[') ? `[${loopback}]` : loopback;
}

/**
 * Builds the frozen configuration of `lore ingest` from an environment. Only its own variables
 * and HOST and PORT are read and checked: a bad server variable (say DATABASE_URL) is not its
 * business. The service is LORE_URL, else the server's HOST and PORT, else the default.
 */
export function loadClientConfig(environment: Record<string, string | undefined> = process.env): ClientConfig {
  const { env, set, problems } = readVariables(ClientEnvSchema, validateClientEnv, environment);
  if (problems.length > 0) throw new ConfigError([...new Set(problems)]);
  const valid = env as ClientEnv;
  const fromServer = set.has('HOST') || set.has('PORT');
  return Object.freeze({
    serviceUrl: valid.LORE_URL?.replace(/\/+$/, '') ?? (valid.PORT === 0 ? undefined : `http://${connectableHost(valid.HOST)}:${valid.PORT}`),
    serviceUrlFrom: valid.LORE_URL !== undefined ? 'LORE_URL' : fromServer ? 'HOST and PORT' : 'the default',
    token: valid.LORE_TOKEN,
    clientId: valid.LORE_CLIENT_ID,
    clientSecret: valid.LORE_CLIENT_SECRET,
  } as ClientConfig);
}

/** The documented variables, for `lore config` style listings and the README table. */
export const configSchema = EnvSchema;
