import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../../test/fake-openai.ts';
import { engine, startTestServer, type TestServer } from '../../../../test/harness.ts';
import { createKnowledgeBase, ingest, markdownDocument, submit, waitForJob, type GenericRecord } from '../../../../test/ingestion.ts';

const JOBS = '/api/v2/data-ingestion/jobs';

describe(`ingestion processing: dedup, updates, deletions, cancellation, isolation (${engine})`, () => {
  let server: TestServer;
  let fake: FakeOpenAi;
  let token: string;

  before(async () => {
    fake = await startFakeOpenAi();
    server = await startTestServer(fakeEmbeddingsEnv(fake));
    ({ token } = await server.tenant());
  });
  after(async () => {
    await server.close();
    await fake.close();
  });

  async function chunkRows(entryId: string): Promise<{ id: string; text: string }[]> {
    const { rows } = await server.context.db.query<{ id: string; text: string }>('SELECT id, text FROM chunks WHERE entry_id = $1 ORDER BY ordinal', [entryId]);
    return rows;
  }

  test('the same payload twice creates nothing the second time; a changed record is updated and its old chunks are gone; a deletion removes entry and chunks', async () => {
    const kb = await createKnowledgeBase(server, token, { chunkSize: 400, chunkOverlap: 50 });
    const records: GenericRecord[] = Array.from({ length: 12 }, (_, index) => ({
      id: `doc-${index}`,
      title: `Document ${index}`,
      content: markdownDocument(index, 1200),
      contentType: 'markdown',
      tags: ['guide'],
      url: `https://docs.example.com/${index}`,
    }));
    const first = await ingest(server, token, kb, records);
    assert.equal(first.status, 'completed');
    assert.equal(first.result.entriesCreated, 12);
    assert.ok(first.result.embeddingsGenerated >= 24, `several chunks per record: ${first.result.embeddingsGenerated}`);
    const entries = await server.request('GET', `/api/v2/knowledge-bases/${kb}/entries?limit=100`, { token });
    assert.equal(entries.body.total, 12);

    const embeddedBefore = fake.inputs.length;
    const second = await ingest(server, token, kb, records);
    assert.equal(second.status, 'completed');
    assert.deepEqual(second.data.progress, { processed: 12, total: 12, successful: 0, failed: 0, skipped: 12 });
    assert.ok(second.data.results.every((result: any) => result.status === 'skipped' && result.reason === 'unchanged'));
    assert.equal(second.result.entriesCreated, 0);
    assert.equal(second.result.entriesSkipped, 12);
    assert.equal(second.result.embeddingsGenerated, 0);
    assert.equal(fake.inputs.length, embeddedBefore, 'nothing embedded again');
    assert.equal((await server.request('GET', `/api/v2/knowledge-bases/${kb}/entries`, { token })).body.total, 12);

    const changed = records.map((record) => ({ ...record }));
    changed[4]!.content = `# A new version\n\nThis text replaces the whole document about ${changed[4]!.id}. ${'Fresh words. '.repeat(40)}`;
    const entryId = first.data.results[4].entryId;
    const oldChunks = await chunkRows(entryId);
    const third = await ingest(server, token, kb, changed);
    assert.equal(third.result.entriesUpdated, 1);
    assert.equal(third.result.entriesSkipped, 11);
    const updated = third.data.results[4];
    assert.deepEqual([updated.status, updated.action, updated.entryId], ['success', 'updated', entryId]);
    const newChunks = await chunkRows(entryId);
    assert.ok(newChunks.length > 0);
    assert.ok(newChunks.every((chunk) => !oldChunks.some((old) => old.id === chunk.id)), 'old chunk rows are gone');
    assert.ok(newChunks.every((chunk) => changed[4]!.content!.includes(chunk.text)));
    const entry = await server.request('GET', `/api/v2/knowledge-bases/${kb}/entries/${entryId}`, { token });
    assert.equal(entry.body.content, changed[4]!.content);
    assert.deepEqual(entry.body.chunks.map((chunk: any) => chunk.id), newChunks.map((chunk) => chunk.id));

    const deletion = await ingest(server, token, kb, [{ id: 'doc-7', deleted: true }, { id: 'never-existed', deleted: true }]);
    assert.deepEqual(deletion.data.results.map((result: any) => [result.sourceId, result.status]), [['doc-7', 'deleted'], ['never-existed', 'skipped']]);
    assert.equal(deletion.result.entriesDeleted, 1);
    const deletedId = first.data.results[7].entryId;
    assert.equal((await server.request('GET', `/api/v2/knowledge-bases/${kb}/entries/${deletedId}`, { token })).status, 404);
    assert.deepEqual(await chunkRows(deletedId), [], 'no chunk or vector is left behind');
    assert.equal((await server.request('GET', `/api/v2/knowledge-bases/${kb}/entries`, { token })).body.total, 11);
  });

  test('the same content under another record id is skipped as a duplicate, in the same payload or across jobs', async () => {
    const kb = await createKnowledgeBase(server, token);
    const job = await ingest(server, token, kb, [
      { id: 'original', content: 'Shared text about webhooks and retries.' },
      { id: 'copy', content: 'Shared text about webhooks and retries.' },
    ]);
    assert.deepEqual(job.data.results.map((r: any) => [r.status, r.reason ?? null]), [['success', null], ['skipped', 'duplicate']]);
    const later = await ingest(server, token, kb, [{ id: 'copy-2', content: 'Shared text about webhooks and retries.' }]);
    assert.equal(later.data.results[0].status, 'skipped');
    assert.equal(later.data.results[0].reason, 'duplicate');
    assert.equal(later.data.results[0].duplicateOf, job.data.results[0].entryId);
    assert.equal((await server.request('GET', `/api/v2/knowledge-bases/${kb}/entries`, { token })).body.total, 1);
  });

  test('cancelling a processing job stops it within a batch, keeps what was written and records partial counts; a pending job never runs', async () => {
    const kb = await createKnowledgeBase(server, token);
    const many = Array.from({ length: 600 }, (_, index) => ({ id: `slow-${index}`, content: `Record number ${index} about slow embedding providers.` }));
    fake.delayMs = 400;
    try {
      const running = await submit(server, token, kb, many);
      const queued = await submit(server, token, kb, [{ id: 'queued', content: 'never processed' }]);
      await waitForJob(server, token, running, (job) => job.status === 'processing' && job.data.progress.processed > 0, 30_000);
      assert.equal((await server.request('DELETE', `${JOBS}/${running}`, { token })).status, 204);
      assert.equal((await server.request('DELETE', `${JOBS}/${queued}`, { token })).status, 204);
      const cancelled = await server.request('GET', `${JOBS}/${running}`, { token });
      assert.equal(cancelled.body.status, 'cancelled');
      assert.equal((await server.request('DELETE', `${JOBS}/${running}`, { token })).status, 409);
      // The worker notices at its next batch boundary and records what it wrote.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const settled = (await server.request('GET', `${JOBS}/${running}`, { token })).body;
      assert.equal(settled.status, 'cancelled');
      assert.ok(settled.data.progress.processed > 0 && settled.data.progress.processed < 600, `partial: ${settled.data.progress.processed}`);
      assert.equal(settled.result.entriesCreated, settled.data.progress.processed);
      const stored = await server.request('GET', `/api/v2/knowledge-bases/${kb}/entries?limit=1`, { token });
      assert.equal(stored.body.total, settled.data.progress.processed, 'what was written stays, and matches the counts');
      const pending = (await server.request('GET', `${JOBS}/${queued}`, { token })).body;
      assert.equal(pending.status, 'cancelled');
      assert.equal(pending.data.progress.processed, 0);
      assert.equal(pending.started_at, null);
      const filtered = await server.request('GET', `${JOBS}?status=cancelled`, { token });
      assert.ok(filtered.body.jobs.some((job: any) => job.id === running));
    } finally {
      fake.delayMs = 0;
    }
  });

  test('a content-hub export is decoded, converted to Markdown and indexed', async () => {
    const kb = await createKnowledgeBase(server, token);
    const data = JSON.parse(await readFile(new URL('../adapters/fixtures/content-hub-export.json', import.meta.url), 'utf8'));
    const answer = await server.request('POST', JOBS, { token, body: { adapterType: 'content-hub', knowledgeBaseId: kb, data } });
    assert.equal(answer.status, 202, answer.text);
    const job = await waitForJob(server, token, answer.body.jobId);
    assert.equal(job.status, 'completed');
    assert.equal(job.data.adapterType, 'content-hub');
    const success = job.data.results.filter((result: any) => result.status === 'success');
    assert.ok(success.length > 0);
    const entry = await server.request('GET', `/api/v2/knowledge-bases/${kb}/entries/${success[0].entryId}`, { token });
    assert.equal(entry.status, 200);
    assert.ok(!entry.body.content.includes('&lt;'), 'entities decoded');
    assert.ok(!/<\/?(p|h1|table)>/.test(entry.body.content), 'converted to Markdown');
    assert.ok(entry.body.chunks.length > 0);
  });

  test('entries and jobs of one workspace are invisible to another', async () => {
    const kb = await createKnowledgeBase(server, token);
    const job = await ingest(server, token, kb, [{ id: 'secret', content: 'Workspace A confidential launch plan.' }]);
    const entryId = job.data.results[0].entryId;
    const other = await server.tenant();
    for (const [method, path] of [
      ['GET', `/api/v2/knowledge-bases/${kb}/entries`],
      ['GET', `/api/v2/knowledge-bases/${kb}/entries/${entryId}`],
      ['DELETE', `/api/v2/knowledge-bases/${kb}/entries/${entryId}`],
      ['GET', `${JOBS}/${job.id}`],
      ['GET', `${JOBS}/${job.id}?includePayload=true`],
      ['DELETE', `${JOBS}/${job.id}`],
    ] as const) {
      const answer = await server.request(method, path, { token: other.token });
      assert.equal(answer.status, 404, `${method} ${path}: ${answer.text}`);
    }
    const retrieve = await server.request('POST', `/api/v2/knowledge-bases/${kb}/retrieve`, { token: other.token, body: { query: 'launch plan' } });
    assert.equal(retrieve.status, 404);
    const still = await server.request('GET', `/api/v2/knowledge-bases/${kb}/entries/${entryId}`, { token });
    assert.equal(still.status, 200);
    assert.equal(still.body.chunks.length, 1);
  });

  test('DELETE of an entry removes its chunks and vectors; entries filter by tag, source and title', async () => {
    const kb = await createKnowledgeBase(server, token);
    const job = await ingest(server, token, kb, [
      { id: 'x', title: 'Refund policy', content: 'Refunds are paid within 14 days.', tags: ['billing'] },
      { id: 'y', title: 'Shipping times', content: 'Parcels ship within 2 days.', tags: ['logistics'] },
    ]);
    const byTag = await server.request('GET', `/api/v2/knowledge-bases/${kb}/entries?tag=billing`, { token });
    assert.deepEqual(byTag.body.entries.map((entry: any) => entry.recordId), ['x']);
    const byTitle = await server.request('GET', `/api/v2/knowledge-bases/${kb}/entries?q=SHIPPING`, { token });
    assert.deepEqual(byTitle.body.entries.map((entry: any) => entry.recordId), ['y']);
    const bySource = await server.request('GET', `/api/v2/knowledge-bases/${kb}/entries?sourceId=${job.result.sourceId}`, { token });
    assert.equal(bySource.body.total, 2);
    const entryId = job.data.results[0].entryId;
    assert.equal((await server.request('DELETE', `/api/v2/knowledge-bases/${kb}/entries/${entryId}`, { token })).status, 204);
    assert.deepEqual(await chunkRows(entryId), []);
    assert.equal((await server.request('DELETE', `/api/v2/knowledge-bases/${kb}/entries/${entryId}`, { token })).status, 404);
  });

  test('retrieve ranks the matching chunk first in keyword, vector and hybrid modes, and honours filters', async () => {
    const kb = await createKnowledgeBase(server, token);
    await ingest(server, token, kb, [
      { id: 'refunds', title: 'Refunds', content: 'Refunds are paid back to the original card within fourteen days.', tags: ['billing'] },
      { id: 'shipping', title: 'Shipping', content: 'Parcels leave the warehouse within two working days.', tags: ['logistics'] },
      { id: 'passwords', title: 'Passwords', content: 'Reset a forgotten password from the login page.', tags: ['accounts'] },
    ]);
    for (const mode of ['keyword', 'vector', 'hybrid']) {
      const answer = await server.request('POST', `/api/v2/knowledge-bases/${kb}/retrieve`, { token, body: { query: 'when are refunds paid back', mode, topK: 3 } });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.body.mode, mode);
      assert.equal(answer.body.results[0].recordId, 'refunds', `${mode}: ${JSON.stringify(answer.body.results.map((r: any) => r.recordId))}`);
      assert.equal(answer.body.results[0].title, 'Refunds');
      assert.equal(typeof answer.body.results[0].score, 'number');
    }
    const filtered = await server.request('POST', `/api/v2/knowledge-bases/${kb}/retrieve`, {
      token,
      body: { query: 'when are refunds paid back', filter: { tags: ['logistics'] } },
    });
    assert.ok(filtered.body.results.length > 0);
    assert.ok(filtered.body.results.every((result: any) => result.recordId === 'shipping'));
    const bad = await server.request('POST', `/api/v2/knowledge-bases/${kb}/retrieve`, { token, body: { query: '', mode: 'fuzzy' } });
    assert.equal(bad.status, 400);
  });
});
