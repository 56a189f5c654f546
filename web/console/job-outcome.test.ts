import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jobOutcome } from './job-outcome.tsx';
import type { Job } from './types.ts';

/** A job of `status` with these counts; the rest of a job does not change its outcome. */
function job(status: Job['status'], successful: number, failed: number, skipped: number): Job {
  return { status, data: { progress: { processed: successful + failed + skipped, total: 10, successful, failed, skipped } } } as Job;
}

test('job outcome: a warning with some failed records, an error with nothing but failures or a failed job, else none', () => {
  const cases: [Job, ReturnType<typeof jobOutcome>][] = [
    [job('completed', 10, 0, 0), undefined],
    [job('completed', 0, 0, 10), undefined],
    [job('pending', 0, 0, 0), undefined],
    [job('completed', 7, 3, 0), 'warning'],
    [job('completed', 0, 3, 7), 'warning'],
    [job('cancelled', 2, 1, 0), 'warning'],
    [job('processing', 4, 1, 0), 'warning'],
    // Every record failed: the status stays completed, the console shows an error.
    [job('completed', 0, 10, 0), 'error'],
    [job('processing', 0, 2, 0), 'error'],
    [job('failed', 0, 0, 0), 'error'],
    [job('failed', 5, 1, 0), 'error'],
  ];
  for (const [given, outcome] of cases) assert.equal(jobOutcome(given), outcome, JSON.stringify(given));
});
