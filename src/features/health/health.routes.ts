import { Type } from 'typebox';
import type { AppContext } from '../../core/context.ts';
import { pendingMigrations } from '../../core/db/migrate.ts';
import { AppError } from '../../core/errors.ts';
import type { App } from '../../core/http/app-types.ts';
import { responses } from '../../core/http/schemas.ts';
import { RedisStateSchema } from '../query/rate-limit-redis.ts';

/** GET /healthz (the process answers) and GET /readyz (database reachable, migrations applied). */
export function registerHealthRoutes(app: App, context: AppContext): void {
  app.get(
    '/healthz',
    { schema: { tags: ['health'], summary: 'Liveness', response: { 200: Type.Object({ status: Type.Literal('ok') }) } } },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['health'],
        summary: 'Readiness: the database answers, every migration is applied and the embedded engine\'s disk has room',
        response: responses(
          { 200: Type.Object({ status: Type.Literal('ready'), engine: Type.String(), details: Type.Object({ redis: RedisStateSchema }) }) },
          [503],
        ),
      },
    },
    async () => {
      // The embedded engine's disk, once a statement met it full: named before the database is asked.
      const diskFull = await context.db.diskFull?.();
      if (diskFull) throw new AppError('SERVICE_UNAVAILABLE', diskFull);
      let pending: number;
      try {
        pending = await pendingMigrations(context.db);
      } catch (error) {
        context.log.warn({ err: error }, 'readiness check failed');
        throw new AppError('SERVICE_UNAVAILABLE', 'The database is not reachable.');
      }
      if (pending > 0) throw new AppError('SERVICE_UNAVAILABLE', `${pending} database migration(s) are not applied.`);
      // A Redis outage leaves the process ready: queries are answered without rate limits then
      // (decision 62), and taking every API process out of the load balancer would stop them all.
      return { status: 'ready' as const, engine: context.db.engine, details: { redis: app.rateLimitRedisState() } };
    },
  );
}
