import type { AppContext } from '../../core/context.ts';
import type { App } from '../../core/http/app-types.ts';
import { guardedErrors, responses } from '../../core/http/schemas.ts';
import { authorize, caller } from '../auth/guard.ts';
import { getExperience } from '../experiences/experiences.service.ts';
import { InsightsQuerySchema, InsightsSchema } from './insights.schemas.ts';
import { insights, resolvePeriod } from './insights.service.ts';

/**
 * GET /api/v2/insights: what the workspace's sessions say, per day and as content gaps. Its scope is
 * `sessions:read`: it is read from the same queries and feedback a session transcript shows, so a
 * client that may read the transcripts may read their summary, and no new scope is needed. Like the
 * transcripts, a token restricted to some knowledge bases counts only the experiences within them.
 */
export function registerInsightsRoutes(app: App, context: AppContext): void {
  app.get(
    '/api/v2/insights',
    {
      onRequest: authorize(context, ['sessions:read']),
      schema: {
        tags: ['insights'],
        security: [{ bearerAuth: [] }],
        summary: 'Queries, answered and fallback shares, feedback and median latency per day, and the content gaps of a period',
        querystring: InsightsQuerySchema,
        response: responses({ 200: InsightsSchema }, [...guardedErrors, 404]),
      },
    },
    async (request) => {
      const auth = caller(request);
      const { experienceId } = request.query;
      const period = resolvePeriod(request.query);
      if (experienceId) await getExperience(context.db, auth, experienceId);
      return insights(context.db, context.embedder, auth, experienceId, period);
    },
  );
}
