import type { Logger } from 'pino';

// While the database is unreachable, polls back off to this: an outage of minutes costs a few
// dozen connection attempts per poller, and the resume comes within 5 s of the database.
const MAX_OUTAGE_POLL_MS = 5_000;

export type PollerOptions = {
  /** How often an idle poller looks for work. */
  pollMs: number;
  log: Logger;
  /** Logged once when a poll first fails, e.g. "ingestion worker could not claim a job; retrying". */
  lostMessage: string;
  /** Logged when a poll succeeds again after failures. */
  backMessage: string;
};

/**
 * The polling of a queue's consumer (ingestion workers, webhook dispatchers): a claim that rides
 * out an unreachable database, logged once per outage, and a wait between polls that backs off
 * during an outage and that `wake()` cuts short.
 */
export class Poller {
  private failedPolls = 0;
  private wakeUp: (() => void) | undefined;

  constructor(private readonly options: PollerOptions) {}

  /** Runs one claim; a failure is logged (once per outage) and counts as nothing found. */
  async claim<T>(claim: () => Promise<T | undefined>): Promise<T | undefined> {
    try {
      const found = await claim();
      if (this.failedPolls > 0) this.options.log.info({ failedPolls: this.failedPolls }, this.options.backMessage);
      this.failedPolls = 0;
      return found;
    } catch (error) {
      if (this.failedPolls === 0) this.options.log.error({ err: error }, this.options.lostMessage);
      this.failedPolls += 1;
      return undefined;
    }
  }

  /** Waits until the next poll: `pollMs`, or longer while polls fail; `wake()` ends it at once. */
  idle(): Promise<void> {
    const { pollMs } = this.options;
    const ms = this.failedPolls > 0 ? Math.min(pollMs * 2 ** this.failedPolls, MAX_OUTAGE_POLL_MS) : pollMs;
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = done;
    });
  }

  /** Ends the current wait, if any: look now (new work, or stopping). */
  wake(): void {
    this.wakeUp?.();
  }
}
