import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../../test/fake-openai.ts';
import { engine, startTestServer, type TestServer } from '../../../../test/harness.ts';
import { createKnowledgeBase, markdownDocument, submit, waitForJob } from '../../../../test/ingestion.ts';
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

/** The sizes a 1 s, 100-record sizer asks for after each of `batches` batches that take `ms(records)`. */
function sizesAfter(batches: number, ms: (records: number) => number): number[] {
  const sizer = new BatchSizer(1000, 100, 10);
  const sizes: number[] = [];
  for (let batch = 0; batch < batches; batch += 1) {
    const records = sizer.records;
    sizer.observe(records, ms(records));
    sizes.push(sizer.records);
  }
  return sizes;
}

describe('BatchSizer', () => {
  test('grows at most twofold per batch up to the cap while a batch stays under the target, and shrinks at once', () => {
    const sizer = new BatchSizer(1000, 100, 10);
    assert.equal(sizer.records, 10);
    const sizes = [10, 20, 40, 80].map((records) => {
      sizer.observe(records, records); // 1 ms a record: wants 1,000
      return sizer.records;
    });
    assert.deepEqual(sizes, [20, 40, 80, 100]);
    const slower = new BatchSizer(1000, 100, 10);
    slower.observe(10, 10);
    slower.observe(20, 4000); // 200 ms a record
    assert.equal(slower.records, 5);
    const slowest = new BatchSizer(1000, 100, 10);
    slowest.observe(10, 60_000);
    assert.equal(slowest.records, 1, 'never below one record');
    slowest.observe(0, 5);
    assert.equal(slowest.records, 1, 'an empty batch teaches nothing');
  });

  test('behind a fixed cost above the target (an embedding service answering in 1.5 s), batches grow instead of dwindling to one record', () => {
    const sizes = sizesAfter(8, (records) => 1500 + 2 * records);
    assert.equal(sizes[0], 7, 'the first batch alone looks like 150 ms a record');
    assert.deepEqual(sizes.slice(1), [14, 28, 56, 100, 100, 100, 100]);
  });

  test('behind a fixed cost equal to the target (an embedding service answering in 1 s), one half batch tells it apart and batches grow', () => {
    assert.deepEqual(sizesAfter(8, (records) => 1000 + 2 * records), [5, 10, 20, 40, 80, 100, 100, 100]);
  });

  test('where records cost the time, the half batch is tried once and the size comes back', () => {
    // 100 ms a record, nothing fixed: 10 records fill the target.
    assert.deepEqual(sizesAfter(10, (records) => 100 * records), [5, 10, 10, 10, 10, 10, 10, 10, 10, 10]);
  });
});
