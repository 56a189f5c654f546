import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../../core/config.ts';
import type { Db } from '../../core/db/db.ts';
import { Poller } from '../../core/poller.ts';
import { claimDelivery, recordAttempt, releaseDelivery, type ClaimedDelivery } from './delivery-queue.ts';
import { nextStep } from './retry-schedule.ts';
import { sendWebhook, targetAgents, type TargetAgents } from './send-webhook.ts';
import { signatures, webhookPayload } from './webhook-payload.ts';

// Deliveries in flight per process: one slow receiver (up to WEBHOOKS_TIMEOUT_MS per attempt)
// does not hold up the others' events.
const CONCURRENCY = 4;
// The lease outlasts the attempt's time limit by this margin, for recording its outcome.
const LEASE_MARGIN_MS = 5_000;

export type DispatcherOptions = { pollMs: number; webhooks: Config['webhooks'] };

/**
 * Sends the outbox's deliveries: claims a due one, signs and POSTs it, records the attempt and
 * schedules a retry or disables the endpoint, and polls for the next. Runs in `lore worker`
 * processes and in API processes that run ingestion workers; any number share one database.
 * An unreachable database pauses it (polls back off), never ends the process.
 */
export class WebhookDispatcher {
  readonly id = `webhooks:${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private running = false;
  private loop: Promise<void> | undefined;
  private readonly poller: Poller;
  private readonly stopping = new AbortController();
  private readonly agents: TargetAgents;

  constructor(
    private readonly deps: { db: Db; log: Logger },
    private readonly options: DispatcherOptions,
  ) {
    this.agents = targetAgents(options.webhooks.allowPrivateTargets);
    this.poller = new Poller({
      pollMs: options.pollMs,
      log: deps.log,
      lostMessage: 'webhook dispatcher could not reach the database; retrying',
      backMessage: 'webhook dispatcher reaches the database again',
    });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops polling; attempts in flight are aborted and their deliveries given back, due now. */
  async stop(): Promise<void> {
    this.running = false;
    this.stopping.abort();
    this.poller.wake();
    await this.loop;
  }

  /**
   * One loop claims and starts up to CONCURRENCY attempts at once; while nothing is due it polls
   * once per `pollMs`, so an idle process costs one query per interval, not one per slot.
   */
  private async run(): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    while (this.running) {
      if (inFlight.size >= CONCURRENCY) {
        await Promise.race(inFlight);
        continue;
      }
      const delivery = await this.poller.claim(() => claimDelivery(this.deps.db, this.id, this.options.webhooks.timeoutMs + LEASE_MARGIN_MS));
      if (!delivery) {
        await this.poller.idle();
        continue;
      }
      const attempt: Promise<void> = this.deliver(delivery)
        // An outcome that could not be recorded leaves the delivery leased: it is sent again
        // when the lease ends (at least once).
        .catch((error: unknown) => this.deps.log.warn({ err: error, deliveryId: delivery.id }, 'webhook attempt not recorded; it is retried after its lease'))
        .finally(() => inFlight.delete(attempt));
      inFlight.add(attempt);
    }
    await Promise.all(inFlight);
  }

  private async deliver(delivery: ClaimedDelivery): Promise<void> {
    const { db, log } = this.deps;
    const body = JSON.stringify(webhookPayload(delivery.event, delivery.snapshot, delivery.createdAt));
    // The timestamp is the attempt's: receivers refuse signatures older than a few minutes.
    const at = new Date();
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'lore-webhooks/1',
      'webhook-id': delivery.id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signatures(delivery.secrets, delivery.id, at, body),
    };
    const outcome = await sendWebhook(
      { url: delivery.url, body, headers },
      { agents: this.agents, timeoutMs: this.options.webhooks.timeoutMs, signal: this.stopping.signal },
    );
    if (outcome.statusCode === null && this.stopping.signal.aborted) {
      await releaseDelivery(db, delivery);
      return;
    }
    const step = await recordAttempt(db, delivery, at, outcome, (round) => nextStep(outcome, round, this.options.webhooks.retryScheduleMs));
    const entry = { deliveryId: delivery.id, endpointId: delivery.endpointId, workspaceId: delivery.workspaceId, event: delivery.event, ...outcome };
    if (step?.kind === 'failed') log.warn({ ...entry, reason: step.disableReason }, 'webhook delivery failed; endpoint disabled');
    else if (step?.kind === 'retry') log.info({ ...entry, retryInMs: step.delayMs }, 'webhook delivery attempt failed; retrying');
  }
}
