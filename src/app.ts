import { randomUUID } from 'node:crypto';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { AppContext } from './core/context.ts';
import type { App, Feature } from './core/http/app-types.ts';
import { installErrorHandling } from './core/http/error-handler.ts';
import { installMetrics } from './core/http/metrics.ts';
import { ErrorBodySchema } from './core/http/schemas.ts';
import { registerAccessTokenRoutes } from './features/auth/access-tokens.routes.ts';
import { registerClientRoutes } from './features/access-token-clients/clients.routes.ts';
import { registerExperienceRoutes } from './features/experiences/experiences.routes.ts';
import { registerHealthRoutes } from './features/health/health.routes.ts';
import { registerKnowledgeBaseRoutes } from './features/knowledge-bases/knowledge-bases.routes.ts';
import { registerWorkspaceAdminRoutes } from './features/workspaces/workspaces.routes.ts';

/** Every feature of the service, in the order their routes are registered. */
const features: Feature[] = [
  registerHealthRoutes,
  registerAccessTokenRoutes,
  registerWorkspaceAdminRoutes,
  registerClientRoutes,
  registerKnowledgeBaseRoutes,
  registerExperienceRoutes,
];

export type AppOptions = {
  /** The logger requests log to; `context.log` is usually its parent. */
  logger: FastifyBaseLogger;
};

/** Builds the HTTP application; `server.ts` listens. Tests build it with their own context. */
export async function buildApp(context: AppContext, options: AppOptions): Promise<App> {
  const app = Fastify({
    loggerInstance: options.logger,
    genReqId: () => randomUUID(),
    requestIdHeader: 'x-request-id',
    bodyLimit: 30 * 1024 * 1024,
    ajv: {
      // Unknown body fields are reported, not silently dropped, so a typo in a setting is a 400.
      customOptions: { removeAdditional: false, allErrors: true, coerceTypes: 'array', useDefaults: true },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.addHook('onSend', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
  installErrorHandling(app);
  app.addSchema(ErrorBodySchema);
  await app.register(formbody);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'lore',
        version: '2.0.0',
        description: 'Conversational query and bulk data ingestion. Errors use the ErrorBody schema.',
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An access token from POST /v2/auth/access-tokens.' },
          adminKey: { type: 'http', scheme: 'bearer', description: 'The platform ADMIN_API_KEY.' },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, index) => String(json.$id ?? `def-${index}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  installMetrics(app);

  for (const feature of features) await feature(app, context);
  return app;
}
