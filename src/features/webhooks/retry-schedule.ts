/** What one attempt got: an HTTP status, or none (refused, unreachable, timed out) with an error. */
export type AttemptOutcome = { statusCode: number | null; latencyMs: number; error: string | null };

/** What happens to a delivery after an attempt. */
export type NextStep =
  | { kind: 'delivered' }
  | { kind: 'retry'; delayMs: number }
  | { kind: 'failed'; disableReason: string };

/**
 * The step after attempt number `roundAttempts` (counted since the delivery was last queued): a
 * 2xx delivers; a 410 Gone says the receiver is gone for good, so the delivery fails and the
 * endpoint is disabled at once; any other failure waits `scheduleMs[roundAttempts - 1]` and
 * retries, and once the schedule is exhausted the delivery fails and the endpoint is disabled.
 * With the default schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, the Standard Webhooks and
 * Svix schedule) that is 8 attempts over 27.6 hours.
 */
export function nextStep(outcome: AttemptOutcome, roundAttempts: number, scheduleMs: readonly number[]): NextStep {
  const { statusCode } = outcome;
  if (statusCode !== null && statusCode >= 200 && statusCode < 300) return { kind: 'delivered' };
  if (statusCode === 410) return { kind: 'failed', disableReason: 'The endpoint answered 410 Gone.' };
  const delayMs = scheduleMs[roundAttempts - 1];
  if (delayMs !== undefined) return { kind: 'retry', delayMs };
  const last = outcome.error ?? `HTTP ${statusCode}`;
  return { kind: 'failed', disableReason: `A delivery failed ${roundAttempts} attempts in a row; the last: ${last}` };
}
