/**
 * The batch writes of one job attempt that run at the same time, at most `limit` (given at each
 * start, so that it can follow what else the database is writing), each in a
 * transaction of its own. A batch that holds a record an earlier batch still writes waits for
 * it, so that the later version of a record is the one stored, as when batches write one by one.
 * (The adapters refuse a payload that repeats a record id, so this guards the order should one
 * ever accept it.)
 *
 * A write that fails stays counted, so that the next `start` (once the limit is reached) or
 * `settle` throws its error: the attempt ends there, as it did when the next batch awaited its
 * predecessor.
 */
export class WritesInFlight {
  private readonly running: { records: ReadonlySet<string>; done: Promise<void> }[] = [];

  /** Waits until fewer than `limit` writes run and none holds any of `records`, then starts `write`. */
  async start(records: ReadonlySet<string>, limit: number, write: () => Promise<void>): Promise<void> {
    for (;;) {
      const blocking = this.running.length >= limit ? this.running[0] : this.running.find((entry) => [...records].some((id) => entry.records.has(id)));
      if (!blocking) break;
      await blocking.done;
    }
    const entry = { records, done: Promise.resolve() };
    entry.done = write().then(() => {
      this.running.splice(this.running.indexOf(entry), 1);
    });
    // Surfaced by `start` or `settle`; until then a failure must not count as unhandled, which
    // would end the whole process instead of this job's attempt.
    entry.done.catch(() => undefined);
    this.running.push(entry);
  }

  /** Waits until no write runs any more, then throws the first failure, if any. */
  async settle(): Promise<void> {
    const results = await Promise.allSettled(this.running.map((entry) => entry.done));
    const failure = results.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
  }
}
