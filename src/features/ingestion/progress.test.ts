import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, markdownDocument, submit, waitForJob } from '../../../test/ingestion.ts';
import { BatchSizer } from './batch-size.ts';

describe(`ingestion progress moves as records finish (${engine})`, () => {
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

  test('with a slow embedder, a 50-record job shows 0 < processed < 50 while embedding requests are still to come', async () => {
    const kb = await createKnowledgeBase(server, token);
    const records = Array.from({ length: 50 }, (_, index) => ({ id: `slow-${index}`, content: markdownDocument(index, 600) }));
    // One second per embedding request: every batch of the job costs at least that much.
    fake.delayMs = 1000;
    try {
      const requestsBefore = fake.requests;
      const jobId = await submit(server, token, kb, records);
      const seen: { processed: number; requests: number }[] = [];
      const job = await waitForJob(server, token, jobId, (body) => {
        seen.push({ processed: body.data.progress.processed, requests: fake.requests - requestsBefore });
        return body.status === 'completed';
      });
      const requests = fake.requests - requestsBefore;
      assert.equal(job.data.progress.processed, 50);
      const midway = seen.filter((point) => point.processed > 0 && point.processed < 50);
      assert.ok(midway.length > 0, `progress seen mid-way: ${JSON.stringify(seen)}`);
      // Counters that moved only when the whole job was embedded would first show after the last request.
      const first = seen.find((point) => point.processed > 0)!;
      assert.ok(first.requests < requests, `the first records counted after ${first.requests} of ${requests} embedding requests`);
      assert.ok(new Set(midway.map((point) => point.processed)).size >= 2, `the counters moved more than once: ${JSON.stringify(midway)}`);
    } finally {
      fake.delayMs = 0;
    }
  });
});

describe('BatchSizer', () => {
  test('grows at most twofold per batch up to the cap, and shrinks at once to about the target time', () => {
    const sizer = new BatchSizer(1000, 100, 10);
    assert.equal(sizer.records, 10);
    sizer.observe(10, 10); // 1 ms a record: wants 1,000
    assert.equal(sizer.records, 20);
    sizer.observe(20, 20);
    sizer.observe(40, 40);
    sizer.observe(80, 80);
    assert.equal(sizer.records, 100);
    sizer.observe(100, 20_000); // 200 ms a record
    assert.equal(sizer.records, 5);
    sizer.observe(5, 60_000);
    assert.equal(sizer.records, 1, 'never below one record');
    sizer.observe(0, 5);
    assert.equal(sizer.records, 1, 'an empty batch teaches nothing');
  });
});
