import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nextStep } from './retry-schedule.ts';

const schedule = [5_000, 300_000, 1_800_000];
const failure = (statusCode: number | null, error: string | null = null) => ({ statusCode, latencyMs: 12, error });

test('a 2xx delivers, whatever the attempt', () => {
  for (const status of [200, 201, 204, 299]) assert.deepEqual(nextStep(failure(status), 4, schedule), { kind: 'delivered' });
});

test('other answers and network errors wait the schedule, then fail with the reason', () => {
  assert.deepEqual(nextStep(failure(500), 1, schedule), { kind: 'retry', delayMs: 5_000 });
  assert.deepEqual(nextStep(failure(302), 2, schedule), { kind: 'retry', delayMs: 300_000 });
  assert.deepEqual(nextStep(failure(null, 'ECONNREFUSED'), 3, schedule), { kind: 'retry', delayMs: 1_800_000 });
  const exhausted = nextStep(failure(null, 'No answer within 15000 ms.'), 4, schedule);
  assert.equal(exhausted.kind, 'failed');
  assert.match(exhausted.kind === 'failed' ? exhausted.disableReason : '', /failed 4 attempts in a row; the last: No answer within 15000 ms\./);
  const http = nextStep(failure(503), 4, schedule);
  assert.match(http.kind === 'failed' ? http.disableReason : '', /HTTP 503/);
});

test('410 Gone fails at once and disables the endpoint', () => {
  const gone = nextStep(failure(410), 1, schedule);
  assert.deepEqual(gone, { kind: 'failed', disableReason: 'The endpoint answered 410 Gone.' });
});
