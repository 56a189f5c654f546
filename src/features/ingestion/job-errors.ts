/** An error that retrying cannot fix: the job ends `failed` with this message as `result.error`. */
export class UnrecoverableJobError extends Error {
  override name = 'UnrecoverableJobError';
}
