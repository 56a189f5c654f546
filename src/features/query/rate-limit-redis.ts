import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import { Type, type Static } from 'typebox';

/**
 * The longest a query waits for Redis. Each command gives up after it (commandTimeout), and a
 * connection silent that long with commands in flight is dropped (socketTimeout), so that, the
 * offline queue being off, every later call fails at once until a new connection answers: a
 * Redis that stops answering costs the queries in flight 250 ms once, and the others nothing.
 * On loopback a budget check answers in 0.03 ms at the median, and in at most 69 ms one at a
 * time and 80 ms with 50 in flight on a 2-core machine at load averages of 16 to 21
 * (bench/history.md, "Redis round trips"). 250 ms, three times that worst, also rides out
 * event-loop stalls of up to a quarter second: a reply read after a longer stall counts as late,
 * since timers run first, and would be reported as an outage lasting until the reconnection (50 ms).
 */
const BOUND_MS = 250;

/** A first connection, and each reconnection, gives up after this; queries do not wait for it. */
const CONNECT_TIMEOUT_MS = 2_000;

export const RedisStateSchema = Type.Object(
  {
    state: Type.Union([Type.Literal('ok'), Type.Literal('down'), Type.Literal('not configured')]),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'When Redis stopped answering (state `down`).' })),
  },
  { description: 'The Redis of the query rate limits (REDIS_URL). While it is down, queries are answered without rate limits.' },
);

export type RedisState = Static<typeof RedisStateSchema>;

/**
 * The Redis connection the query budgets are counted in, bounded (BOUND_MS) and watched: an
 * outage is logged once when it starts and once when it ends, however many calls fail or
 * reconnections are tried meanwhile, and `state()` shows it in /readyz.
 */
export class RateLimitRedis {
  readonly client: Redis;
  private downSince: Date | undefined;

  constructor(
    url: string,
    private readonly log: FastifyBaseLogger,
  ) {
    this.client = new Redis(url, {
      commandTimeout: BOUND_MS,
      socketTimeout: BOUND_MS,
      connectTimeout: CONNECT_TIMEOUT_MS,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      lazyConnect: true,
    });
    // Emitted for every failed connection attempt too: failed() reports only the first.
    this.client.on('error', (error: Error) => this.failed(error));
    this.client.on('ready', () => this.answered());
  }

  /**
   * Connects before the server listens: without the offline queue, queries arriving while the
   * connection is still being made would go uncounted. Unreachable now, the client keeps
   * reconnecting (logged as an outage) and queries are answered meanwhile.
   */
  async connect(): Promise<void> {
    await this.client.connect().catch((error: Error) => this.failed(error));
  }

  /** A call failed or the connection was lost: the start of an outage, unless one is going on. */
  failed(error: Error): void {
    if (this.downSince) return;
    this.downSince = new Date();
    this.log.warn({ err: error }, 'Redis for rate limits is not answering; queries are answered without rate limits until it answers again');
  }

  /** A call succeeded or a connection is ready: the end of the outage, if there is one. */
  answered(): void {
    if (!this.downSince) return;
    const outageSeconds = Math.round((Date.now() - this.downSince.getTime()) / 100) / 10;
    this.downSince = undefined;
    this.log.info({ outageSeconds }, `Redis for rate limits answers again after ${outageSeconds.toFixed(1)} s; queries are rate limited again`);
  }

  state(): RedisState {
    return this.downSince ? { state: 'down', since: this.downSince.toISOString() } : { state: 'ok' };
  }

  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
