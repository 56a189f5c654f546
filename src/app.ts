import { randomUUID } from 'node:crypto';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Ajv, type AnySchema } from 'ajv';
import addFormats from 'ajv-formats';
import Fastify, { type FastifyBaseLogger, type FastifySchema, type FastifySchemaCompiler } from 'fastify';
import type { AppContext } from './core/context.ts';
import type { App, Feature } from './core/http/app-types.ts';
import { answerClientError, answerFrameworkError, installErrorHandling, requireHostHeader } from './core/http/error-handler.ts';
import { installInputGuard } from './core/http/input-guard.ts';
import { installJsonBodyParser } from './core/http/json-body.ts';
import { addStorableDateFormats } from './core/http/storable-formats.ts';
import { installMetrics } from './core/http/metrics.ts';
import { ErrorBodySchema } from './core/http/schemas.ts';
import { registerAccessTokenRoutes } from './features/auth/access-tokens.routes.ts';
import { registerClientRoutes } from './features/access-token-clients/clients.routes.ts';
import { registerExperienceRoutes } from './features/experiences/experiences.routes.ts';
import { registerEntryRoutes } from './features/entries/entries.routes.ts';
import { registerHealthRoutes } from './features/health/health.routes.ts';
import { registerInsightsRoutes } from './features/insights/insights.routes.ts';
import { registerIngestionRoutes } from './features/ingestion/jobs.routes.ts';
import { registerKnowledgeBaseRoutes } from './features/knowledge-bases/knowledge-bases.routes.ts';
import { registerQueryRoutes } from './features/query/query.routes.ts';
import { registerRetrieveRoutes } from './features/retrieval/retrieve.routes.ts';
import { registerSessionRoutes } from './features/sessions/sessions.routes.ts';
import { registerWorkspaceAdminRoutes } from './features/workspaces/workspaces.routes.ts';
import { registerWebRoutes } from './features/web/web.routes.ts';
import { registerWebhookRoutes } from './features/webhooks/webhooks.routes.ts';

/** Every feature of the service, in the order their routes are registered. */
const features: Feature[] = [
  registerHealthRoutes,
  registerAccessTokenRoutes,
  registerWorkspaceAdminRoutes,
  registerClientRoutes,
  registerKnowledgeBaseRoutes,
  registerExperienceRoutes,
  registerIngestionRoutes,
  registerEntryRoutes,
  registerRetrieveRoutes,
  registerQueryRoutes,
  registerWebRoutes,
  registerSessionRoutes,
  registerInsightsRoutes,
  registerWebhookRoutes,
];

/**
 * Builds the validator of each route schema. A JSON body arrives typed, so `{"name": 5}` is a 400
 * rather than the string "5"; the query string and path parameters are text by nature and are
 * coerced (`?limit=5` is the integer 5). Unknown body fields are reported, not silently dropped,
 * so a typo in a setting is a 400.
 */
function buildValidator(externalSchemas: Record<string, AnySchema>): FastifySchemaCompiler<AnySchema> {
  const ajvFor = (coerceTypes: 'array' | false) => {
    // strictNumbers: a JSON body's 1e400 parses as Infinity, which plain ajv counts as an integer.
    // verbose: each error keeps its schema and value, from which validation-messages.ts words it.
    const ajv = new Ajv({ coerceTypes, removeAdditional: false, allErrors: true, useDefaults: true, addUsedSchema: false, allowUnionTypes: true, strictNumbers: true, verbose: true });
    addFormats.default(ajv);
    addStorableDateFormats(ajv);
    for (const schema of Object.values(externalSchemas)) ajv.addSchema(schema);
    return ajv;
  };
  const typed = ajvFor(false);
  const coerced = ajvFor('array');
  return ({ schema, httpPart }) => (httpPart === 'body' ? typed : coerced).compile(schema);
}

/**
 * Fastify asks for a validator in every plugin context that registers routes (66 in lore), and
 * each new Ajv compiles the JSON Schema meta-schema before anything else: a server's start cost
 * 1.10-1.25 s of CPU that way, 0.31-0.37 s with one validator. Contexts that share the same
 * schemas (all of lore's: ErrorBody) share it.
 */
function sharedValidatorBuilder(): (externalSchemas: Record<string, AnySchema>) => FastifySchemaCompiler<AnySchema> {
  let last: { schemas: AnySchema[]; compile: FastifySchemaCompiler<AnySchema> } | undefined;
  return (externalSchemas) => {
    const schemas = Object.values(externalSchemas);
    const same = last && last.schemas.length === schemas.length && last.schemas.every((schema, index) => schema === schemas[index]);
    if (!last || !same) last = { schemas, compile: buildValidator(externalSchemas) };
    return last.compile;
  };
}

/**
 * A route that also takes multipart/form-data declares that form as `schema.multipartBody`: it is
 * read by the handler rather than validated by Fastify, and only appears in the OpenAPI document.
 */
function documentMultipartBodies({ schema, url }: { schema: FastifySchema & { multipartBody?: unknown }; url: string }) {
  if (!schema?.multipartBody) return { schema, url };
  const { multipartBody, body, ...rest } = schema;
  const content = (body as { content?: Record<string, unknown> } | undefined)?.content ?? {};
  return { schema: { ...rest, body: { content: { ...content, 'multipart/form-data': { schema: multipartBody } } } }, url };
}

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
    // Management bodies are small; the ingestion route raises its own limit (JSON_BODY_LIMIT_MB).
    bodyLimit: 1024 * 1024,
    // Behind a reverse proxy, the client IP (rate limits) comes from X-Forwarded-For.
    trustProxy: context.config.trustProxy ? [...context.config.trustProxy] : false,
    // The published type of `buildValidator` has its compiler take a bare schema; Fastify passes
    // the route definition (`{schema, httpPart, ...}`), as its own default compiler expects.
    schemaController: { compilersFactory: { buildValidator: sharedValidatorBuilder() as never } },
    // Errors raised before a route runs are answered in the spec's shape too. Node answers a
    // missing Host header with a bare 400 of its own; the hook below answers it instead.
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
    http: { requireHostHeader: false },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.addHook('onSend', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
  installErrorHandling(app);
  requireHostHeader(app);
  installInputGuard(app);
  installJsonBodyParser(app);
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
    transform: documentMultipartBodies,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  installMetrics(app);

  for (const feature of features) await feature(app, context);
  return app;
}
