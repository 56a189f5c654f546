/**
 * How many records the next batch of a job takes. A job's counters are its committed result rows,
 * and a batch's rows commit together, so the batch size is how far the counters jump at a time: a
 * fixed 100 records kept a 600-record upload at "0 / 600" for the 95 s its first batch took to
 * embed with the builtin encoder. Sized by time instead, a batch holds about `targetMs` of work:
 * a few records with a slow encoder (the counters move about once a second), the full
 * `maxRecords` where records are cheap (the batched writes of PostgreSQL keep their throughput;
 * decision 139).
 *
 * A batch's time is modelled as a fixed part (an embedding request's latency, a transaction) plus
 * a part per record, fitted to the last few batches. Sizing by the time per record alone would
 * shrink batches without end behind an embedding service answering in 1.5 s whatever the batch,
 * making every request carry one record: where the fixed part is over a third of the target, a
 * batch takes as many records as make the per-record part twice as long as the fixed one, so at
 * most a third of the job's time goes to fixed costs.
 */
export class BatchSizer {
  private size: number;
  /** Undefined until batches of different sizes have told it apart from the time per record. */
  private fixedMs: number | undefined;
  private readonly recent: { records: number; ms: number }[] = [];

  constructor(
    private readonly targetMs: number,
    private readonly maxRecords: number,
    initialRecords: number,
  ) {
    this.size = Math.min(initialRecords, maxRecords);
  }

  /** Records the next batch may take. */
  get records(): number {
    return this.size;
  }

  /**
   * Learns from a batch of `records` that took `ms`. The size at most doubles at once: a batch of
   * cheap records (all unchanged, say) must not make the next one, of records to embed, run for
   * a minute. It shrinks at once when records got slower.
   */
  observe(records: number, ms: number): void {
    if (records === 0) return;
    this.recent.push({ records, ms });
    if (this.recent.length > RECENT_BATCHES) this.recent.shift();
    // The fixed part changes only with batches of different sizes to tell it from the rest.
    const fitted = fixedPart(this.recent);
    if (fitted !== undefined) this.fixedMs = Math.max(0, fitted);
    const fixedMs = this.fixedMs ?? 0;
    const perRecordMs = Math.max((ms - fixedMs) / records, MIN_PER_RECORD_MS);
    const wanted = Math.round(Math.max(this.targetMs - fixedMs, 2 * fixedMs) / perRecordMs);
    this.size = Math.max(1, Math.min(wanted, this.size * 2, this.maxRecords));
    // A size that repeats itself never shows the fixed part: behind an embedding service answering
    // in 1 s, 10 records in 1,020 ms look like 102 ms a record, which asks for 10 again, and a job
    // stayed at 10 records a second where 100 cost the same second (console-jobs test, 2026-11-28).
    // One batch of half the size tells the two parts apart; it never runs longer than the target.
    if (this.fixedMs === undefined && this.size === records && records > 1 && records < this.maxRecords) {
      this.size = Math.ceil(records / 2);
    }
  }
}

const RECENT_BATCHES = 6;
const MIN_PER_RECORD_MS = 0.01;

/** The intercept of the least-squares line of time over records, or undefined while every size is the same. */
function fixedPart(batches: { records: number; ms: number }[]): number | undefined {
  const meanRecords = batches.reduce((sum, batch) => sum + batch.records, 0) / batches.length;
  const meanMs = batches.reduce((sum, batch) => sum + batch.ms, 0) / batches.length;
  let covariance = 0;
  let variance = 0;
  for (const batch of batches) {
    covariance += (batch.records - meanRecords) * (batch.ms - meanMs);
    variance += (batch.records - meanRecords) ** 2;
  }
  if (variance === 0) return undefined;
  return meanMs - (Math.max(0, covariance / variance) * meanRecords);
}
