/** An error that retrying cannot fix: the job ends `failed` with this message as `result.error`. */
export class UnrecoverableJobError extends Error {
  override name = 'UnrecoverableJobError';
}

/** The job is no longer this worker's (cancelled, or taken over): it stops without writing more. */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';
}
