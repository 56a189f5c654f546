/**
 * The real lore server for a test, on a random loopback port and a database of its own, and the
 * HTTP calls to it. What does not depend on the engine of the run lives here: a file that needs an
 * embedded server only starts one with `startEmbeddedTestServer` and, importing nothing of
 * harness.ts, runs on one engine of scripts/run-tests.js only (scripts/test-files.js), as every
 * browser test does; harness.ts picks the run's engine.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../src/core/config.ts';
import type { Logger } from 'pino';
import { createLogger } from '../src/core/logger.ts';
import { startServer, type RunningServer } from '../src/server.ts';

const execFileAsync = promisify(execFile);

export const ADMIN_KEY = 'test-admin-key-0123456789';

/** A parsed HTTP answer. `body` is JSON when the response says so, else text. */
export type Answer<Body = any> = { status: number; headers: Headers; body: Body; text: string };

export type RequestOptions = {
  body?: unknown;
  /** A raw body sent as is (with `headers['content-type']`). */
  raw?: string | Buffer | FormData | URLSearchParams;
  token?: string;
  headers?: Record<string, string>;
};

/** A server's database: the environment that points the server at it, and its removal. */
export type TestDatabase = { env: Record<string, string>; drop(): Promise<void> };

/**
 * An embedded (PGlite) database in a temp directory. With `migrated`, and a migrated template
 * prepared by scripts/run-tests.js, it starts as a copy of the template; the server's own
 * migration step then finds it up to date, as after a restart.
 */
export async function embeddedTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const dir = await mkdtemp(join(tmpdir(), 'lore-test-'));
  const template = options.migrated ? process.env.LORE_TEST_PGLITE_TEMPLATE : undefined;
  // cp(1) rather than fs.cp: 0.3 s of CPU against 0.8 for the template's 1,100 files.
  if (template) await execFileAsync('cp', ['-a', `${template}/.`, dir]);
  return { env: { DATA_DIR: dir }, drop: () => rm(dir, { recursive: true, force: true }) };
}

export class TestServer {
  constructor(
    readonly server: RunningServer,
    private readonly database: TestDatabase,
  ) {}

  get url(): string {
    return this.server.url;
  }

  get context() {
    return this.server.context;
  }

  /** Sends a request; JSON bodies are encoded, and the answer's JSON decoded. */
  async request<Body = any>(method: string, path: string, options: RequestOptions = {}): Promise<Answer<Body>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: BodyInit | undefined;
    if (options.raw !== undefined) body = options.raw as BodyInit;
    else if (options.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(options.body);
    }
    const response = await fetch(this.url + path, { method, headers, body });
    const text = await response.text();
    const isJson = response.headers.get('content-type')?.includes('json') && text.length > 0;
    return { status: response.status, headers: response.headers, body: isJson ? JSON.parse(text) : text, text };
  }

  /** POST as the platform admin. */
  admin<Body = any>(method: string, path: string, body?: unknown): Promise<Answer<Body>> {
    return this.request(method, path, { body, token: ADMIN_KEY });
  }

  async createWorkspace(name = 'test'): Promise<string> {
    const answer = await this.admin('POST', '/api/v2/admin/workspaces', { name });
    if (answer.status !== 201) throw new Error(`workspace: ${answer.status} ${answer.text}`);
    return answer.body.id;
  }

  async createClient(
    workspaceId: string,
    scopes: string[],
    extra: { knowledgeBaseIds?: string[] } = {},
  ): Promise<{ id: string; clientId: string; clientSecret: string }> {
    const answer = await this.admin('POST', `/api/v2/admin/workspaces/${workspaceId}/access-token-clients`, {
      name: 'test client',
      scopes,
      ...extra,
    });
    if (answer.status !== 201) throw new Error(`client: ${answer.status} ${answer.text}`);
    return answer.body;
  }

  /** An access token of a new client with these scopes, through the real token grant. */
  async token(workspaceId: string, scopes: string[], extra: { knowledgeBaseIds?: string[] } = {}): Promise<string> {
    const client = await this.createClient(workspaceId, scopes, extra);
    const answer = await this.request('POST', '/v2/auth/access-tokens', {
      body: { clientId: client.clientId, clientSecret: client.clientSecret },
    });
    if (answer.status !== 200) throw new Error(`token: ${answer.status} ${answer.text}`);
    return answer.body.access_token;
  }

  /** A new workspace and a token holding every scope in it. */
  async tenant(scopes: string[] = ['*']): Promise<{ workspaceId: string; token: string }> {
    const workspaceId = await this.createWorkspace();
    return { workspaceId, token: await this.token(workspaceId, scopes) };
  }

  async close(): Promise<void> {
    await this.server.close();
    await this.database.drop();
  }
}

/** The environment a test server starts with (before `overrides`). */
export function testEnv(databaseEnv: Record<string, string>, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_API_KEY: ADMIN_KEY,
    TOKEN_SECRET: 'test-token-secret-0123456789-0123456789',
    LOG_LEVEL: process.env.LORE_TEST_LOG_LEVEL ?? 'silent',
    LOG_FORMAT: 'json',
    BOOTSTRAP: 'never',
    // The builtin-fast token table that scripts/run-tests.js prepared once for every test.
    ...(process.env.MODELS_DIR ? { MODELS_DIR: process.env.MODELS_DIR } : {}),
    ...databaseEnv,
    ...overrides,
  };
}

/** Starts a server on `database` (removed again when the server closes), logging to `logger` if given. Close it in `after`. */
export async function startTestServerOn(database: TestDatabase, overrides: Record<string, string> = {}, logger?: Logger): Promise<TestServer> {
  const config = loadConfig(testEnv(database.env, overrides), false);
  const server = await startServer(config, { logger: logger ?? createLogger(config), print: () => undefined });
  return new TestServer(server, database);
}

/** Starts a server on an embedded database of its own, whatever engine the run tests. Close it in `after`. */
export async function startEmbeddedTestServer(overrides: Record<string, string> = {}): Promise<TestServer> {
  return startTestServerOn(await embeddedTestDatabase({ migrated: true }), overrides);
}
