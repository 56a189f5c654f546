/**
 * The queue's promises under stalls and restarts (issue 8, defects 6 and 10), one step at a time
 * against the real database: a takeover does not wait for a frozen worker's transaction, a worker
 * that lost its job writes nothing more, counters are the result rows, and only attempts that
 * made no progress count against the limit.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, submit } from '../../../test/ingestion.ts';
import type { EmbeddingProvider } from '../../core/providers/embeddings/provider.ts';
import { DocumentExtractor } from './adapters/files/extractor.ts';
import { processJob } from './pipeline/process-job.ts';
import { claimJob, completeJob, releaseOrphanedJobs, type ClaimedJob } from './queue.ts';
import { IngestionWorker } from './worker.ts';

const LEASE_SECONDS = 30;
/** `count` records of their own: ids and contents differ from every other call's (content is deduplicated by hash). */
const records = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, index) => ({ id: `${prefix}-${index}`, content: `Record ${index} of the ${prefix} set is about topic ${index * 3}.` }));

describe(`the ingestion queue under stalls and restarts (${engine})`, () => {
  let fake: FakeOpenAi;
  let server: TestServer;
  let token: string;
  let knowledgeBaseId: string;

  before(async () => {
    fake = await startFakeOpenAi();
    // No worker of the server's own: the test is every worker there is.
    server = await startTestServer({ ...fakeEmbeddingsEnv(fake), INGESTION_WORKERS: '0' });
    ({ token } = await server.tenant());
    knowledgeBaseId = await createKnowledgeBase(server, token);
  });
  after(async () => {
    await server?.close();
    await fake?.close();
  });

  const db = () => server.context.db;
  const extractor = () => new DocumentExtractor(server.context.config.extraction);
  const deps = () => ({ db: db(), embedder: server.context.embedder as EmbeddingProvider, log: server.context.log as never, extractor: extractor() });

  /** Makes the job's lease expire now, as if its worker had died. */
  async function expireLease(job: ClaimedJob): Promise<void> {
    await db().query(`UPDATE ingestion_jobs SET lease_expires_at = now() - interval '1 second' WHERE workspace_id = $1 AND id = $2`, [job.workspaceId, job.id]);
  }

  async function claim(worker: string, jobId: string): Promise<ClaimedJob> {
    const job = await claimJob(db(), worker, LEASE_SECONDS);
    assert.equal(job?.id, jobId, `${worker} claims the job`);
    return job!;
  }

  async function readJob(jobId: string): Promise<any> {
    return (await server.request('GET', `/api/v2/data-ingestion/jobs/${jobId}`, { token })).body;
  }

  test('an attempt that wrote records does not count against the limit; attempts without progress do', async () => {
    const jobId = await submit(server, token, knowledgeBaseId, records('progress', 5));
    const first = await claim('w1', jobId);
    assert.deepEqual([first.attempts, first.attemptsWithoutProgress], [1, 1]);
    // w1 writes every record, then "dies" before completing the job.
    assert.equal(await processJob(deps(), first, async () => true), 'done');
    await expireLease(first);
    const second = await claim('w2', jobId);
    assert.deepEqual([second.attempts, second.attemptsWithoutProgress], [2, 1], 'the first attempt made progress');
    await expireLease(second);
    const third = await claim('w3', jobId);
    assert.deepEqual([third.attempts, third.attemptsWithoutProgress], [3, 2], 'the second attempt wrote nothing');
    await completeJob(db(), third);
  });

  test('a worker that lost its job writes nothing more, and the counters stay the result rows', async () => {
    const jobId = await submit(server, token, knowledgeBaseId, records('lost', 4));
    const stale = await claim('stale', jobId);
    await expireLease(stale);
    const current = await claim('current', jobId);
    // The stale worker wakes and runs on: its first write meets the fence.
    assert.equal(await processJob(deps(), stale, async () => true), 'stopped');
    const { rows } = await db().query<{ count: number }>('SELECT count(*)::int AS count FROM entries WHERE workspace_id = $1 AND record_id LIKE $2', [
      current.workspaceId,
      'lost-%',
    ]);
    assert.equal(rows[0]!.count, 0, 'no entry written by the stale worker');
    assert.equal((await readJob(jobId)).data.progress.processed, 0);

    assert.equal(await processJob(deps(), current, async () => true), 'done');
    await completeJob(db(), current);
    const job = await readJob(jobId);
    assert.deepEqual(job.data.progress, { processed: 4, total: 4, successful: 4, failed: 0, skipped: 0 });
    assert.equal(job.result.entriesCreated, 4);
    assert.equal(job.result.embeddingsGenerated, job.data.results.reduce((sum: number, result: any) => sum + result.embeddingCount, 0));

    // Cancelled mid-way: what was written stays, and the counters say exactly that.
    const cancelledId = await submit(server, token, knowledgeBaseId, records('cancel', 6));
    const worker = await claim('canceller', cancelledId);
    assert.equal((await server.request('DELETE', `/api/v2/data-ingestion/jobs/${cancelledId}`, { token })).status, 204);
    assert.equal(await processJob(deps(), worker, async () => true), 'stopped');
    const cancelled = await readJob(cancelledId);
    assert.equal(cancelled.status, 'cancelled');
    const stored = await db().query<{ count: number }>('SELECT count(*)::int AS count FROM entries WHERE workspace_id = $1 AND record_id LIKE $2', [
      worker.workspaceId,
      'cancel-%',
    ]);
    assert.equal(cancelled.data.progress.processed, cancelled.data.results.length);
    assert.equal(cancelled.result.entriesCreated, stored.rows[0]!.count);
  });

  test('an embedded server that starts again resumes a job left processing at once, without waiting out its lease', async () => {
    const jobId = await submit(server, token, knowledgeBaseId, records('orphan', 3));
    await claim('died', jobId);
    const worker = new IngestionWorker(deps(), { leaseSeconds: LEASE_SECONDS, pollMs: 50, maxAttempts: 5, extraction: server.context.config.extraction });
    if (engine === 'pglite') assert.equal(await releaseOrphanedJobs(db()), 1);
    else await db().query(`UPDATE ingestion_jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [jobId]);
    worker.start();
    try {
      const deadline = Date.now() + 20_000;
      while ((await readJob(jobId)).status !== 'completed' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal((await readJob(jobId)).status, 'completed');
    } finally {
      await worker.stop();
    }
  });

  if (engine === 'postgres') {
    test('a worker frozen inside a record\'s transaction neither hides its job from takeover nor blocks it for good', async () => {
      const jobId = await submit(server, token, knowledgeBaseId, records('frozen', 2));
      const frozen = await claim('frozen', jobId);
      // What a record's transaction holds: the foreign key of a result row locks the job row
      // FOR KEY SHARE until it commits. Here a session takes that lock and never commits.
      const session = new pg.Client({ connectionString: server.context.config.databaseUrl });
      await session.connect();
      session.on('error', () => undefined);
      try {
        await session.query('BEGIN');
        await session.query('SELECT 1 FROM ingestion_jobs WHERE workspace_id = $1 AND id = $2 FOR KEY SHARE', [frozen.workspaceId, jobId]);
        await expireLease(frozen);
        const taken = await claimJob(db(), 'rescuer', LEASE_SECONDS);
        assert.equal(taken?.id, jobId, 'the claim does not skip a job whose row is only key-share locked');
      } finally {
        await session.end().catch(() => undefined);
      }
      // The server ends a session idle in a transaction, so a frozen worker's locks go at last.
      const setting = await db().query<{ timeout: string }>("SELECT current_setting('idle_in_transaction_session_timeout') AS timeout");
      assert.equal(setting.rows[0]!.timeout, `${Math.max(server.context.config.ingestionLeaseSeconds, 5)}s`);
    });
  }
});
