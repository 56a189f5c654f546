import rateLimit from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import type { App } from '../../core/http/app-types.ts';
import type { ExperienceCaller } from './experience-access.ts';
import { RateLimitRedis, type RedisState } from './rate-limit-redis.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The budget a rate-limit check is counting against (set right before each check). */
    rateLimitBucket?: { key: string; max: number };
  }
  interface FastifyInstance {
    /** How the Redis of the query budgets is doing, for /readyz. */
    rateLimitRedisState(): RedisState;
  }
}

const WINDOW_MS = 60_000;

/**
 * What a request spends: a question (and its feedback), or a read of the widget's configuration.
 * Each counts in budgets of its own, of the same sizes, so that opening the widget spends none of
 * the visitor's questions (an experience may allow one question a minute per address).
 */
export type Spending = 'query' | 'widget-config';

/** Checks a request against its budgets; throws the 429 when one is spent. */
export type QueryRateLimit = (request: FastifyRequest, caller: ExperienceCaller, sessionId: string | undefined, spending?: Spending) => Promise<void>;

const spent: Record<Spending, { prefix: string; what: string }> = {
  query: { prefix: '', what: 'queries' },
  'widget-config': { prefix: 'widget-config:', what: 'widget configuration requests' },
};

/**
 * Query budgets per minute, counted by @fastify/rate-limit in Redis when REDIS_URL is set (so
 * every API process spends one budget) and in memory otherwise. Every query counts against its
 * workspace; an anonymous query also counts against its client IP and its session, so that one
 * visitor of a public page cannot spend the workspace's budget. The visitor's budgets are checked
 * first: a refused visitor's requests then do not count against the workspace. A Redis outage
 * lets queries through (logged once, shown by /readyz) rather than refusing every visitor.
 */
export async function installQueryRateLimit(app: App, context: AppContext): Promise<QueryRateLimit> {
  const limits = context.config.rateLimits;
  const redis = context.config.redisUrl ? new RateLimitRedis(context.config.redisUrl, context.log) : undefined;
  app.decorate('rateLimitRedisState', (): RedisState => redis?.state() ?? { state: 'not configured' });
  if (redis) {
    app.addHook('onClose', () => redis.close());
    await redis.connect();
  }
  // The budget's options are the plugin's own, and createRateLimit() gets none: given options,
  // it counts in a child store whose keys @fastify/rate-limit prefixes with the route's method
  // and URL, which a check called from a handler has not, hence `lore-rate-limit:undefinedundefined-ip:…`.
  // Errors come back to `spend` (skipOnError off), which lets the query through and tells `redis`.
  await app.register(rateLimit, {
    global: false,
    redis: redis?.client,
    nameSpace: 'lore-rate-limit:',
    skipOnError: false,
    timeWindow: WINDOW_MS,
    keyGenerator: (request: FastifyRequest) => request.rateLimitBucket!.key,
    max: async (request: FastifyRequest) => request.rateLimitBucket!.max,
  });
  const check = app.createRateLimit();

  const spend = async (request: FastifyRequest, spending: Spending, key: string, max: number, from: string) => {
    const { prefix, what } = spent[spending];
    request.rateLimitBucket = { key: `${prefix}${key}`, max };
    let outcome: Awaited<ReturnType<typeof check>>;
    try {
      outcome = await check(request);
    } catch (error) {
      if (!redis) throw error;
      redis.failed(error as Error);
      return;
    }
    redis?.answered();
    if (!outcome.isAllowed && outcome.isExceeded) {
      const seconds = Math.max(1, outcome.ttlInSeconds);
      throw new AppError('RATE_LIMITED', `Too many ${what} ${from} (${max} per minute); retry in ${seconds} s.`, {
        headers: { 'retry-after': String(seconds) },
      });
    }
  };

  return async (request, caller, sessionId, spending = 'query') => {
    const { experience, claims } = caller;
    if (!claims) {
      const own = experience.settings.rateLimit ?? {};
      // Counted per experience, as its settings may set the budget: one shared count against
      // several experiences' budgets would let a low budget spend a higher one's.
      await spend(request, spending, `ip:${experience.id}:${request.ip}`, own.ipPerMinute ?? limits.ipPerMinute, 'from this address');
      if (sessionId) await spend(request, spending, `session:${sessionId}`, own.sessionPerMinute ?? limits.sessionPerMinute, 'in this session');
    }
    await spend(request, spending, `workspace:${experience.workspaceId}`, limits.workspacePerMinute, 'for this workspace');
  };
}
