import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { JobResultsCache, type JobResults } from './job-results.ts';

const counts = { processed: 0, successful: 0, failed: 0, skipped: 0, created: 0, updated: 0, deleted: 0, embeddings: 0 };
const results = (version: string, bytes: number): JobResults => ({ version, counts, json: Buffer.alloc(bytes, 0x20) });

describe('JobResultsCache', () => {
  test('answers only for the same workspace and version', () => {
    const cache = new JobResultsCache(1000);
    cache.set('w1', 'job', results('3:100', 10));
    assert.equal(cache.get('w1', 'job', '3:100')?.version, '3:100');
    assert.equal(cache.get('w2', 'job', '3:100'), undefined);
    assert.equal(cache.get('w1', 'job', '4:150'), undefined);
    assert.equal(cache.get('w1', 'other', '3:100'), undefined);
  });

  test('a new version replaces the old one and the bytes it held', () => {
    const cache = new JobResultsCache(1000);
    cache.set('w', 'job', results('1:1', 300));
    cache.set('w', 'job', results('2:3', 400));
    assert.equal(cache.size, 400);
    assert.equal(cache.get('w', 'job', '1:1'), undefined);
    assert.ok(cache.get('w', 'job', '2:3'));
  });

  test('holds at most its bytes, evicting the least recently read first; never holds one larger than all', () => {
    const cache = new JobResultsCache(1000);
    cache.set('w', 'a', results('v', 400));
    cache.set('w', 'b', results('v', 400));
    assert.ok(cache.get('w', 'a', 'v'));
    cache.set('w', 'c', results('v', 400));
    assert.equal(cache.size, 800);
    assert.ok(cache.get('w', 'a', 'v'));
    assert.equal(cache.get('w', 'b', 'v'), undefined);
    assert.ok(cache.get('w', 'c', 'v'));
    cache.set('w', 'd', results('v', 1001));
    assert.equal(cache.get('w', 'd', 'v'), undefined);
    assert.equal(cache.size, 800);
  });
});
