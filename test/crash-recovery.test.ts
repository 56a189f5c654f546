/**
 * Kill -9 of the process running an ingestion job, mid-job: another process takes the job over
 * when the lease expires and finishes it; every record is present exactly once and no chunk is
 * duplicated. On PostgreSQL the job runs in `lore worker` processes beside an API server; on the
 * embedded engine the server process itself is killed and started again on the same data.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openPglite } from '../src/core/db/pglite.ts';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from './fake-openai.ts';
import { ADMIN_KEY, engine, startTestServer, type TestServer } from './harness.ts';
import { freePort, LoreServer, send } from './lore-process.ts';

const RECORDS = 2500;
const TOKEN_SECRET = 'crash-test-secret-0123456789-0123456789';
const records = Array.from({ length: RECORDS }, (_, index) => ({ id: `r${index}`, content: `Record ${index} says hello to number ${index * 7}.` }));

/** Polls a job through `base` until `until` holds. */
async function waitForJob(base: string, token: string, jobId: string, until: (job: any) => boolean, timeoutMs: number): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let job: any;
  while (Date.now() < deadline) {
    const reply = await send('GET', `${base}/api/v2/data-ingestion/jobs/${jobId}`, { token }).catch(() => undefined);
    if (reply?.status === 200) {
      job = reply.body;
      if (until(job)) return job;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`job ${jobId} did not get there in ${timeoutMs} ms; last: ${JSON.stringify(job?.data?.progress)} ${job?.status}`);
}

/** Every record once, with one chunk each, created by the job and nothing else. */
function assertExactlyOnce(job: any): void {
  assert.equal(job.status, 'completed');
  assert.deepEqual(job.data.progress, { processed: RECORDS, total: RECORDS, successful: RECORDS, failed: 0, skipped: 0 });
  assert.equal(job.result.entriesCreated, RECORDS);
  assert.equal(job.result.entriesUpdated, 0);
  assert.equal(job.data.results.length, RECORDS);
  assert.equal(new Set(job.data.results.map((result: any) => result.sourceId)).size, RECORDS);
  assert.ok(job.data.results.every((result: any) => result.status === 'success' && result.action === 'created'));
}

async function assertNoDuplicateChunks(query: (sql: string) => Promise<{ rows: any[] }>): Promise<void> {
  const { rows } = await query(
    'SELECT (SELECT count(*) FROM entries)::int AS entries, (SELECT count(*) FROM chunks)::int AS chunks, (SELECT count(DISTINCT text) FROM chunks)::int AS texts',
  );
  assert.deepEqual(rows[0], { entries: RECORDS, chunks: RECORDS, texts: RECORDS });
}

describe(`crash recovery: kill -9 mid-job (${engine})`, () => {
  let fake: FakeOpenAi;
  const children: LoreServer[] = [];
  let dir: string;

  before(async () => {
    fake = await startFakeOpenAi();
    // Slow enough that the kill lands mid-job: about 25 batches of 100 records.
    fake.delayMs = 150;
    dir = await mkdtemp(join(tmpdir(), 'lore-crash-'));
  });
  after(async () => {
    await Promise.all(children.map((child) => child.kill()));
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  });

  const workerEnv = (extra: Record<string, string>) => ({
    ...fakeEmbeddingsEnv(fake),
    TOKEN_SECRET,
    ADMIN_API_KEY: ADMIN_KEY,
    BOOTSTRAP: 'never',
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'warn',
    INGESTION_LEASE_SECONDS: '3',
    INGESTION_POLL_MS: '100',
    ...extra,
  });

  if (engine === 'postgres') {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ ...fakeEmbeddingsEnv(fake), INGESTION_WORKERS: '0', TOKEN_SECRET });
    });
    after(() => server?.close());

    test('a lore worker killed with SIGKILL mid-job: another worker finishes it, nothing lost, nothing duplicated', async () => {
      const { token } = await server.tenant();
      const kb = (await server.request('POST', '/api/v2/knowledge-bases', { token, body: { name: 'crash' } })).body.id;
      const env = workerEnv({ DATABASE_URL: server.context.config.databaseUrl! });
      const first = LoreServer.spawn(['worker'], { env, cwd: dir });
      children.push(first);
      const submitted = await server.request('POST', '/api/v2/data-ingestion/jobs', {
        token,
        body: { adapterType: 'generic-json', knowledgeBaseId: kb, data: { records } },
      });
      assert.equal(submitted.status, 202);
      const midway = await waitForJob(server.url, token, submitted.body.jobId, (job) => job.data.progress.processed >= 300, 60_000);
      await first.kill();
      assert.ok(midway.data.progress.processed < RECORDS, 'killed before the end');
      const second = LoreServer.spawn(['worker'], { env, cwd: dir });
      children.push(second);
      const job = await waitForJob(server.url, token, submitted.body.jobId, (found) => found.status !== 'processing', 120_000);
      assertExactlyOnce(job);
      await assertNoDuplicateChunks((sql) => server.context.db.query(sql));
    });
  } else {
    test('the embedded server killed with SIGKILL mid-job: restarted, it finishes the job, nothing lost, nothing duplicated', async () => {
      const port = await freePort();
      const env = workerEnv({ DATA_DIR: join(dir, 'data'), PORT: String(port), LOG_LEVEL: 'info' });
      const first = LoreServer.start({ env, cwd: dir });
      children.push(first);
      const base = await first.listening();
      const workspace = await send('POST', `${base}/api/v2/admin/workspaces`, { token: ADMIN_KEY, json: { name: 'crash' } });
      const client = await send('POST', `${base}/api/v2/admin/workspaces/${workspace.body.id}/access-token-clients`, {
        token: ADMIN_KEY,
        json: { name: 'crash', scopes: ['*'] },
      });
      const grant = await send('POST', `${base}/v2/auth/access-tokens`, { json: { clientId: client.body.clientId, clientSecret: client.body.clientSecret } });
      const token = grant.body.access_token;
      const kb = (await send('POST', `${base}/api/v2/knowledge-bases`, { token, json: { name: 'crash' } })).body.id;
      const submitted = await send('POST', `${base}/api/v2/data-ingestion/jobs`, {
        token,
        json: { adapterType: 'generic-json', knowledgeBaseId: kb, data: { records } },
      });
      assert.equal(submitted.status, 202);
      const midway = await waitForJob(base, token, submitted.body.jobId, (job) => job.data.progress.processed >= 300, 60_000);
      await first.kill();
      assert.ok(midway.data.progress.processed < RECORDS, 'killed before the end');

      const second = LoreServer.start({ env, cwd: dir });
      children.push(second);
      await second.listening();
      const job = await waitForJob(base, token, submitted.body.jobId, (found) => found.status !== 'processing', 120_000);
      assertExactlyOnce(job);
      assert.equal((await second.stop()).code, 0);
      const db = await openPglite(join(dir, 'data', 'pgdata'));
      try {
        await assertNoDuplicateChunks((sql) => db.query(sql));
      } finally {
        await db.close();
      }
    });
  }
});
