import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError } from '../../../test/assert-error.ts';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, ingest, submit, waitForJob } from '../../../test/ingestion.ts';

const JOBS = '/api/v2/data-ingestion/jobs';

/** A content-hub item; `tags` keywords past the limit of 100 make it a per-record failure. */
function item(id: string, text: string, tags = 1) {
  const keywords = Array.from({ length: tags }, (_, index) => `tag${index}`).join(', ');
  return {
    content: {
      documentIdentifier: id,
      parseImage: false,
      deleted: false,
      inlineContent: { textContent: { data: `&lt;h1&gt;${text}&lt;/h1&gt;&lt;p&gt;All about ${text}, in some detail.&lt;/p&gt;` }, type: 'TEXT' },
    },
    metadata: { inlineAttributes: [{ key: 'keywords', value: { stringValue: keywords, type: 'STRING' } }] },
  };
}

describe(`retrying a job's failed records; where a job came from (${engine})`, () => {
  let server: TestServer;
  let fake: FakeOpenAi;
  let token: string;
  let kb: string;

  before(async () => {
    fake = await startFakeOpenAi();
    server = await startTestServer(fakeEmbeddingsEnv(fake));
    ({ token } = await server.tenant());
    kb = await createKnowledgeBase(server, token);
  });
  after(async () => {
    await server.close();
    await fake.close();
  });

  test('POST .../retry: 202 with a new job of exactly the failed records, in order, from the kept payload', async () => {
    const items = [item('ok-1', 'Billing'), item('bad-1', 'Refunds', 101), item('ok-2', 'Shipping'), item('bad-2', 'Exports', 150), item('ok-3', 'Limits')];
    const form = new FormData();
    form.set('adapterType', 'content-hub');
    form.set('knowledgeBaseId', kb);
    form.set('data', new Blob([JSON.stringify([items, { timeTaken: '3s' }])], { type: 'application/json' }), 'hub-export.json');
    const submitted = await server.request('POST', JOBS, { token, raw: form });
    assert.equal(submitted.status, 202, submitted.text);
    const original = await waitForJob(server, token, submitted.body.jobId);
    assert.equal(original.status, 'completed');
    assert.deepEqual(original.data.progress, { processed: 5, total: 5, successful: 3, failed: 2, skipped: 0 });
    assert.equal(original.data.fileName, 'hub-export.json');
    assert.equal(original.data.retryOf, null);

    const retry = await server.request('POST', `${JOBS}/${original.id}/retry`, { token });
    assert.equal(retry.status, 202, retry.text);
    assert.notEqual(retry.body.id, original.id);
    assert.ok(['pending', 'processing', 'completed'].includes(retry.body.status), retry.body.status);
    assert.equal(retry.body.data.adapterType, 'content-hub');
    assert.equal(retry.body.data.knowledgeBaseId, kb);
    assert.equal(retry.body.data.recordCount, 2);
    assert.equal(retry.body.data.retryOf, original.id);
    assert.equal(retry.body.data.fileName, 'hub-export.json');
    assert.equal(retry.body.data.progress.total, 2);

    const retried = await waitForJob(server, token, retry.body.id);
    assert.deepEqual(retried.data.results.map((result: any) => [result.sourceId, result.status]), [['bad-1', 'failed'], ['bad-2', 'failed']]);
    const withPayload = await server.request('GET', `${JOBS}/${retry.body.id}?includePayload=true`, { token });
    assert.deepEqual(withPayload.body.payload, [[items[1], items[3]], { timeTaken: '3s' }]);
    // The retry's own failures can be retried again.
    const again = await server.request('POST', `${JOBS}/${retry.body.id}/retry`, { token });
    assert.equal(again.status, 202, again.text);
    assert.equal(again.body.data.retryOf, retry.body.id);
    await waitForJob(server, token, again.body.id);
  });

  test('a job that failed part-way: the retry takes its failed records and the records it never processed, and stores them', async () => {
    // 200 items, two of them bad: one in the first batch (10 records), one near the end.
    const items = Array.from({ length: 200 }, (_, index) => item(`part-${index}`, `Topic ${index}`, index === 3 || index === 190 ? 101 : 1));
    const submitted = await server.request('POST', JOBS, { token, body: { adapterType: 'content-hub', knowledgeBaseId: kb, data: [items, { timeTaken: '9s' }] } });
    assert.equal(submitted.status, 202, submitted.text);
    // Each embeddings call waits 500 ms: once the first batch is stored, the provider starts
    // refusing the key (401, which no retry gets past) and the job fails with most records unread.
    fake.delayMs = 500;
    let original;
    try {
      await waitForJob(server, token, submitted.body.jobId, (job) => job.data.progress.processed >= 10);
      fake.failWith = 401;
      original = await waitForJob(server, token, submitted.body.jobId);
    } finally {
      fake.failWith = undefined;
      fake.delayMs = 0;
    }
    assert.equal(original.status, 'failed', JSON.stringify(original.result));
    const recorded = new Map<string, string>(original.data.results.map((result: any) => [result.sourceId, result.status]));
    assert.equal(recorded.get('part-3'), 'failed');
    assert.ok(recorded.size < 150, `${recorded.size} records processed before the failure`);
    assert.equal(original.data.progress.failed, 1);
    const expected = items.filter((_, index) => recorded.get(`part-${index}`) !== 'success');
    assert.equal(expected.length, 200 - original.data.progress.successful);

    const retry = await server.request('POST', `${JOBS}/${original.id}/retry`, { token });
    assert.equal(retry.status, 202, retry.text);
    assert.equal(retry.body.data.retryOf, original.id);
    assert.equal(retry.body.data.recordCount, expected.length);
    const withPayload = await server.request('GET', `${JOBS}/${retry.body.id}?includePayload=true`, { token });
    assert.deepEqual(withPayload.body.payload, [expected, { timeTaken: '9s' }]);
    const retried = await waitForJob(server, token, retry.body.id);
    assert.equal(retried.status, 'completed');
    assert.deepEqual(
      retried.data.results.map((result: any) => [result.sourceId, result.status]),
      expected.map((value) => [value.content.documentIdentifier, ['part-3', 'part-190'].includes(value.content.documentIdentifier) ? 'failed' : 'success']),
    );
    // Read back: every good item of the 200 is stored once, from the first job or from the retry.
    const { rows } = await server.context.db.query<{ record_id: string }>('SELECT record_id FROM entries WHERE knowledge_base_id = $1 AND record_id LIKE $2', [
      kb,
      'part-%',
    ]);
    const good = items.map((_, index) => `part-${index}`).filter((id) => id !== 'part-3' && id !== 'part-190');
    assert.deepEqual(rows.map((row) => row.record_id).sort(), good.sort());
  });

  test('a JSON body has no file name; a generic-json job without failures gives 409', async () => {
    const job = await ingest(server, token, kb, [{ id: 'clean-1', content: 'Nothing wrong with this record.' }]);
    assert.equal(job.data.fileName, null);
    const path = `${JOBS}/${job.id}/retry`;
    const message = assertError(await server.request('POST', path, { token }), 409, path.slice(4));
    assert.equal(message, 'The job has no failed or unprocessed records to retry.');
  });

  test('409 while the job is pending or processing; 404 for an unknown job or one of another workspace', async () => {
    fake.delayMs = 1500;
    try {
      const jobId = await submit(server, token, kb, [{ id: 'slow-1', content: 'A record embedded slowly.' }]);
      const path = `${JOBS}/${jobId}/retry`;
      const message = assertError(await server.request('POST', path, { token }), 409, path.slice(4));
      assert.match(message, /^The job is still (pending|processing); its failed records can be retried once it has finished\.$/);
      const other = await server.tenant();
      assertError(await server.request('POST', path, { token: other.token }), 404, path.slice(4));
      await waitForJob(server, token, jobId);
    } finally {
      fake.delayMs = 0;
    }
    const unknown = `${JOBS}/00000000-0000-4000-8000-000000000000/retry`;
    assertError(await server.request('POST', unknown, { token }), 404, unknown.slice(4));
    const malformed = `${JOBS}/not-a-uuid/retry`;
    assertError(await server.request('POST', malformed, { token }), 400, malformed.slice(4));
    const reader = await server.token(await server.createWorkspace(), ['data-ingestion:read']);
    assertError(await server.request('POST', unknown, { token: reader }), 403, unknown.slice(4));
  });

  test('409 for a files job: its uploaded files are gone once it ends', async () => {
    const form = new FormData();
    form.set('adapterType', 'files');
    form.set('knowledgeBaseId', kb);
    form.append('files', new Blob(['']), 'empty.txt');
    form.append('files', new Blob(['# Fine\n\nA fine document.']), 'fine.md');
    const submitted = await server.request('POST', JOBS, { token, raw: form });
    assert.equal(submitted.status, 202, submitted.text);
    const job = await waitForJob(server, token, submitted.body.jobId);
    assert.equal(job.data.progress.failed, 1);
    assert.equal(job.data.fileName, null, 'a files job names its files in its results');
    const path = `${JOBS}/${job.id}/retry`;
    const message = assertError(await server.request('POST', path, { token }), 409, path.slice(4));
    assert.equal(message, 'The uploaded files of a files job are not kept once it ends: upload the failed ones again (empty.txt).');
  });
});
