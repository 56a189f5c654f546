import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MULTIPART_FROM_BYTES } from './lore-client.ts';
import {
  batchLimits,
  contentHubEnvelope,
  genericJsonEnvelope,
  payloadText,
  recordIndexOf,
  splitIntoBatches,
  type Batch,
  type BatchLimits,
  type SourceRecord,
} from './job-batches.ts';

/** Records whose JSON is exactly `size` bytes each: `{"id":"r<n>","content":"xxx"}`. */
function records(sizes: number[]): SourceRecord[] {
  return sizes.map((size, index) => {
    const empty = JSON.stringify({ id: `r${index}`, content: '' });
    return { json: JSON.stringify({ id: `r${index}`, content: 'x'.repeat(size - empty.length) }), location: index + 1 };
  });
}

async function split(input: SourceRecord[], limits: BatchLimits): Promise<Batch[]> {
  const batches: Batch[] = [];
  for await (const batch of splitIntoBatches(input, limits)) batches.push(batch);
  return batches;
}

describe('splitting records into jobs', () => {
  const cases: Array<{ name: string; sizes: number[]; limits: BatchLimits; expected: number[][] }> = [
    { name: 'by record count', sizes: Array(1200).fill(100), limits: { maxRecords: 500, maxBytes: 1e9 }, expected: [[500, 50_499], [500, 50_499], [200, 20_199]] },
    { name: 'by bytes: 3 records of 300 bytes and their 2 commas fit 902 bytes, not 901', sizes: [300, 300, 300, 300], limits: { maxRecords: 10, maxBytes: 902 }, expected: [[3, 902], [1, 300]] },
    { name: 'by bytes, one byte short', sizes: [300, 300, 300, 300], limits: { maxRecords: 10, maxBytes: 901 }, expected: [[2, 601], [2, 601]] },
    { name: 'a record over the byte limit gets a job of its own', sizes: [100, 5000, 100, 100], limits: { maxRecords: 10, maxBytes: 1000 }, expected: [[1, 100], [1, 5000], [2, 201]] },
    { name: 'one record per job', sizes: [50, 50, 50], limits: { maxRecords: 1, maxBytes: 1000 }, expected: [[1, 50], [1, 50], [1, 50]] },
    { name: 'no records, no jobs', sizes: [], limits: { maxRecords: 500, maxBytes: 1000 }, expected: [] },
  ];
  for (const { name, sizes, limits, expected } of cases) {
    test(name, async () => {
      const input = records(sizes);
      const batches = await split(input, limits);
      assert.deepEqual(batches.map((batch) => [batch.records.length, batch.bytes]), expected);
      for (const batch of batches) assert.equal(batch.bytes, batch.records.join(',').length, 'bytes are those of the comma-joined JSON');
      assert.deepEqual(batches.flatMap((batch) => batch.records), input.map((record) => record.json), 'every record once, in order');
      assert.deepEqual(batches.flatMap((batch) => batch.locations), input.map((record) => record.location));
    });
  }

  test('bytes are UTF-8 bytes, not characters', async () => {
    const input = [{ json: '"é"', location: 1 }, { json: '"é"', location: 2 }];
    assert.deepEqual((await split(input, { maxRecords: 10, maxBytes: 8 })).map((batch) => batch.bytes), [4, 4]);
    assert.deepEqual((await split(input, { maxRecords: 10, maxBytes: 9 })).map((batch) => batch.bytes), [9]);
  });

  test('the payload of a full batch, inside a submission, stays below the multipart threshold; one more record would not', async () => {
    for (const envelope of [genericJsonEnvelope, contentHubEnvelope({ timeTaken: '0.412s' })]) {
      const limits = batchLimits(envelope, 10_000);
      const [first, second] = await split(records(Array(600).fill(2000)), limits);
      const submission = `{"adapterType":"content-hub","knowledgeBaseId":"${'0'.repeat(36)}","data":${payloadText(first!, envelope)}}`;
      assert.ok(Buffer.byteLength(submission) < MULTIPART_FROM_BYTES, `${Buffer.byteLength(submission)} bytes`);
      assert.ok(first!.bytes + 1 + Buffer.byteLength(second!.records[0]!) > limits.maxBytes);
      assert.equal(limits.maxRecords, 10_000);
    }
  });

  test('payloads are the adapter\'s shapes, and field errors point back to records', () => {
    const batch: Batch = { records: ['{"id":"a"}', '{"id":"b"}'], locations: [7, 9], bytes: 21 };
    assert.deepEqual(JSON.parse(payloadText(batch, genericJsonEnvelope)), { records: [{ id: 'a' }, { id: 'b' }] });
    const contentHub = contentHubEnvelope({ timeTaken: '0.412s' });
    assert.deepEqual(JSON.parse(payloadText(batch, contentHub)), [[{ id: 'a' }, { id: 'b' }], { timeTaken: '0.412s' }]);
    assert.equal(recordIndexOf('/records/1/content', genericJsonEnvelope), 1);
    assert.equal(recordIndexOf('/records/17', genericJsonEnvelope), 17);
    assert.equal(recordIndexOf('/records', genericJsonEnvelope), undefined);
    assert.equal(recordIndexOf('/0/3/content/documentIdentifier', contentHub), 3);
    assert.equal(recordIndexOf('/1/timeTaken', contentHub), undefined);
  });
});
