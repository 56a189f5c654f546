import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nextDelay, pollMaxMs, pollMinMs } from '../../../web/console/hooks.ts';

test('console polling: an unchanged answer stretches the wait by 1.6x up to 30 s; a change goes back to 1 s', () => {
  const cases: [previousMs: number, changed: boolean, expectedMs: number][] = [
    [pollMinMs, false, 1600],
    [1600, false, 2560],
    [2560, false, 4096],
    [20_000, false, pollMaxMs],
    [pollMaxMs, false, pollMaxMs],
    [pollMaxMs, true, pollMinMs],
    [pollMinMs, true, pollMinMs],
  ];
  for (const [previousMs, changed, expectedMs] of cases) {
    assert.equal(nextDelay(previousMs, changed), expectedMs, `after ${previousMs} ms, changed=${changed}`);
  }
});
