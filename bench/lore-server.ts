/**
 * What the benchmarks share to run lore for real: a database of their own (a temporary PGlite
 * directory, or a fresh database on the PostgreSQL server DATABASE_URL names), the server started
 * in-process on it, and a workspace with an all-scopes token obtained through the HTTP API.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadConfig, type Config } from '../src/core/config.ts';
import { createLogger } from '../src/core/logger.ts';
import { startServer } from '../src/server.ts';

export const ADMIN_KEY = 'bench-admin-key-0123456789';
export const TOKEN_SECRET = 'bench-token-secret-0123456789-0123456789';

export type BenchDatabase = { env: Record<string, string>; drop(): Promise<void> };

/** A database of the bench's own, dropped at the end: PGlite in a temporary directory, or a new database on `serverUrl`. */
export async function benchDatabase(serverUrl: string | undefined): Promise<BenchDatabase> {
  const dir = await mkdtemp(join(tmpdir(), 'lore-bench-'));
  if (!serverUrl) return { env: { DATA_DIR: dir }, drop: () => rm(dir, { recursive: true, force: true }) };
  const name = `lore_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    env: { DATA_DIR: dir, DATABASE_URL: url.toString() },
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The environment a bench server (and its worker processes) runs with: the caller's settings over the database's. */
export function benchEnv(database: BenchDatabase, overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    ...database.env,
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_API_KEY: ADMIN_KEY,
    TOKEN_SECRET,
    BOOTSTRAP: 'never',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    LOG_FORMAT: 'json',
    // A full ingestion with the builtin encoder on a busy machine outlasts the default hour.
    TOKEN_TTL_SECONDS: '86400',
    ...overrides,
  };
}

/** The real server, in this process, on the given environment. */
export async function startBenchServer(env: NodeJS.ProcessEnv): Promise<{ config: Config; server: Awaited<ReturnType<typeof startServer>> }> {
  const config = loadConfig(env, false);
  const server = await startServer(config, { logger: createLogger(config), print: () => undefined });
  return { config, server };
}

/** One JSON call to the API; any status from 300 up is an error. */
export async function call(base: string, method: string, path: string, token: string, body?: unknown): Promise<any> {
  const response = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

/**
 * An access token with every scope, through the admin and token endpoints: in a new workspace, or
 * in `workspaceId` when given.
 */
export async function benchTenant(base: string, name: string, workspaceId?: string): Promise<{ workspaceId: string; token: string }> {
  const workspace = workspaceId ? { id: workspaceId } : await call(base, 'POST', '/api/v2/admin/workspaces', ADMIN_KEY, { name });
  const client = await call(base, 'POST', `/api/v2/admin/workspaces/${workspace.id}/access-token-clients`, ADMIN_KEY, { name, scopes: ['*'] });
  const grant = await fetch(`${base}/v2/auth/access-tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ clientId: client.clientId, clientSecret: client.clientSecret }),
  }).then((response) => response.json() as Promise<{ access_token: string }>);
  return { workspaceId: workspace.id, token: grant.access_token };
}

/** Submits records as generic-json jobs of `perJob` records and waits until every job has ended; returns the jobs as last read. */
export async function ingestJobs(base: string, token: string, knowledgeBaseId: string, records: unknown[], perJob: number): Promise<any[]> {
  const jobIds: string[] = [];
  for (let offset = 0; offset < records.length; offset += perJob) {
    const data = { records: records.slice(offset, offset + perJob) };
    const submitted = await call(base, 'POST', '/api/v2/data-ingestion/jobs', token, { adapterType: 'generic-json', knowledgeBaseId, data });
    jobIds.push(submitted.jobId);
  }
  const finished = new Map<string, any>();
  while (finished.size < jobIds.length) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    for (const id of jobIds) {
      if (finished.has(id)) continue;
      const job = await call(base, 'GET', `/api/v2/data-ingestion/jobs/${id}`, token);
      if (['completed', 'failed', 'cancelled'].includes(job.status)) finished.set(id, job);
    }
  }
  return [...finished.values()];
}
