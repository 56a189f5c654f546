/**
 * How many records the next batch of a job takes. A job's counters are its committed result rows,
 * and a batch's rows commit together, so the batch size is how far the counters jump at a time: a
 * fixed 100 records kept a 600-record upload at "0 / 600" for the 95 s its first batch took to
 * embed with the builtin encoder. Sized by time instead, a batch holds about `targetMs` of work at
 * the rate the job's last batch was processed: a few records with a slow encoder (the counters move
 * about once a second), the full `maxRecords` where records are cheap (the batched writes of
 * PostgreSQL keep their throughput; decision 139).
 */
export class BatchSizer {
  private size: number;

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
    const perRecordMs = Math.max(ms / records, 0.01);
    const wanted = Math.round(this.targetMs / perRecordMs);
    this.size = Math.max(1, Math.min(wanted, this.size * 2, this.maxRecords));
  }
}
