import { PassThrough } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../../core/context.ts';
import { AppError, errorBody } from '../../core/errors.ts';
import { classifyError } from '../../core/http/error-handler.ts';
import type { App } from '../../core/http/app-types.ts';
import { responses } from '../../core/http/schemas.ts';
import { startAnswer, type AnswerInProgress } from './answer-query.ts';
import { installWidgetCors } from './cors.ts';
import { authorizeExperienceCall } from './experience-access.ts';
import { FeedbackBodySchema, QueryBodySchema, QueryIdParams, QueryResponseSchema } from './query.schemas.ts';
import { continuedSession, newSession, queryExperience, rateQuery } from './query.service.ts';
import { installQueryRateLimit } from './rate-limits.ts';
import { registerWidgetConfigRoute } from './widget-config.ts';
import { assertMetadataSize } from '../sessions/sessions.service.ts';

const tags = ['query'];
const security: { [name: string]: string[] }[] = [{}, { bearerAuth: [] }];

function wantsEventStream(request: FastifyRequest): boolean {
  return /\btext\/event-stream\b/i.test(request.headers.accept ?? '');
}

/** One Server-Sent Event. */
function event(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Streams an answer as Server-Sent Events: meta, delta..., sources, actions, done. The first
 * piece of the answer is awaited before the stream opens, so that a generator that fails at once
 * (a provider down) is an ordinary JSON error with its status; a failure after that is an `error`
 * event carrying the same body.
 */
async function streamAnswer(request: FastifyRequest, reply: FastifyReply, answer: AnswerInProgress, timestamp: string): Promise<FastifyReply> {
  const pieces = answer.deltas[Symbol.asyncIterator]();
  const first = await pieces.next();
  const stream = new PassThrough();
  void reply
    .header('content-type', 'text/event-stream; charset=utf-8')
    .header('cache-control', 'no-cache, no-transform')
    .header('x-accel-buffering', 'no')
    .send(stream);
  void (async () => {
    let text = '';
    try {
      stream.write(event('meta', { queryId: answer.queryId, sessionId: answer.session.id, timestamp }));
      for (let piece = first; !piece.done; piece = await pieces.next()) {
        text += piece.value;
        stream.write(event('delta', { text: piece.value }));
      }
      const response = await answer.complete(text);
      stream.write(event('sources', { sources: response.sources }));
      stream.write(event('actions', { actions: response.actions }));
      stream.write(event('done', response));
    } catch (error) {
      const { status, message } = classifyError(error as FastifyError, request);
      if (status >= 500) request.log.error({ err: error }, 'the answer stream failed');
      // The meta event gave the session's id, so the next question may name it.
      await answer.keepSession().catch((storeError: unknown) => request.log.error({ err: storeError }, 'the session of a failed stream was not stored'));
      stream.write(event('error', errorBody(status, message, request.url)));
    } finally {
      stream.end();
    }
  })();
  return reply;
}

/** POST /api/v2/query (JSON, or Server-Sent Events), answer feedback and the widget's configuration. */
export async function registerQueryRoutes(app: App, context: AppContext): Promise<void> {
  const cors = installWidgetCors(app, ['/api/v2/query', '/api/v2/queries/:queryId/feedback']);
  const rateLimit = await installQueryRateLimit(app, context);
  registerWidgetConfigRoute(app, context, rateLimit);

  app.post(
    '/api/v2/query',
    {
      onSend: cors.onSend,
      schema: {
        tags,
        security,
        summary: 'Answer a question from an experience\'s knowledge bases (Accept: text/event-stream streams it)',
        description:
          'Authentication is optional and set per experience. With `Accept: text/event-stream` the answer streams as events ' +
          '`meta`, `delta` (many), `sources`, `actions` and `done` (the whole response); a failure after the stream opened is an `error` event.',
        body: QueryBodySchema,
        response: responses({ 200: QueryResponseSchema }, [400, 401, 403, 404, 409, 429, 502, 504]),
      },
    },
    async (request, reply) => {
      const body = request.body;
      if (body.metadata) assertMetadataSize(body.metadata);
      const caller = await authorizeExperienceCall(context, request, body.experienceId, body.sessionId ?? undefined);
      const { id: experienceId } = caller.experience;
      const userId = body.userId?.toLowerCase() ?? null;
      // The session is checked before the query is counted, so that its budget cannot be spent
      // through another experience; a new one is stored with the answer, so that a refused or
      // failed query leaves no empty session.
      const continued = body.sessionId ? continuedSession(caller.session, { experienceId, sessionId: body.sessionId, userId }) : undefined;
      await rateLimit(request, caller, continued?.id);
      const session = continued ?? newSession({ experienceId, userId, metadata: body.metadata ?? {} });
      // A caller that goes away stops generation (and with it any provider call).
      const abandoned = new AbortController();
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) abandoned.abort(new AppError('CLIENT_CLOSED'));
      });
      const answer = await startAnswer(context, caller, { ...body, session }, abandoned.signal);
      if (wantsEventStream(request)) return streamAnswer(request, reply, answer, new Date().toISOString());
      let text = '';
      for await (const piece of answer.deltas) text += piece;
      return answer.complete(text);
    },
  );

  app.post(
    '/api/v2/queries/:queryId/feedback',
    {
      onSend: cors.onSend,
      schema: {
        tags,
        security,
        summary: 'Rate an answer (up or down, with an optional comment); a later rating replaces the earlier one',
        params: QueryIdParams,
        body: FeedbackBodySchema,
        response: responses({ 204: Type.Null() }, [400, 401, 403, 404, 429]),
      },
    },
    async (request, reply) => {
      const { experienceId } = await queryExperience(context.db, request.params.queryId);
      const caller = await authorizeExperienceCall(context, request, experienceId);
      await rateLimit(request, caller, undefined);
      await rateQuery(context.db, caller.experience.workspaceId, request.params.queryId, request.body.rating, request.body.comment);
      return reply.code(204).send();
    },
  );
}
