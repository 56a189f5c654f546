import type { AppContext } from '../../core/context.ts';
import type { App } from '../../core/http/app-types.ts';
import { guardedErrors, IdParams, Page, responses } from '../../core/http/schemas.ts';
import { authorize, caller } from '../auth/guard.ts';
import { getExperience } from '../experiences/experiences.service.ts';
import {
  NewSessionSchema,
  SessionChangesSchema,
  SessionListItemSchema,
  SessionListQuerySchema,
  SessionSchema,
  SessionTranscriptSchema,
} from './sessions.schemas.ts';
import {
  assertMetadataSize,
  completeSession,
  createSession,
  getTranscript,
  listSessions,
  replaceSessionMetadata,
} from './sessions.service.ts';

const security = [{ bearerAuth: [] }];
const tags = ['sessions'];

/**
 * Sessions of the caller's workspace (scopes `sessions:read|write`). A token restricted to some
 * knowledge bases reaches only the sessions of experiences within them: a transcript holds the
 * answers and sources of its experience's knowledge bases.
 */
export function registerSessionRoutes(app: App, context: AppContext): void {
  const canRead = authorize(context, ['sessions:read']);
  const canWrite = authorize(context, ['sessions:write']);

  app.post(
    '/api/v2/sessions',
    {
      onRequest: canWrite,
      schema: {
        tags,
        security,
        summary: 'Start a session of an experience ahead of its first query',
        body: NewSessionSchema,
        response: responses({ 201: SessionSchema }, [...guardedErrors, 404]),
      },
    },
    async (request, reply) => {
      const auth = caller(request);
      const { experienceId, userId, metadata = {} } = request.body;
      assertMetadataSize(metadata);
      await getExperience(context.db, auth, experienceId);
      const session = await createSession(context.db, auth.workspaceId, { experienceId, userId: userId?.toLowerCase() ?? null, metadata });
      return reply.code(201).send(session);
    },
  );

  app.get(
    '/api/v2/sessions',
    {
      onRequest: canRead,
      schema: {
        tags,
        security,
        summary: 'List sessions, newest first, filtered by experience, user, status, feedback and unanswered queries',
        querystring: SessionListQuerySchema,
        response: responses({ 200: Page('sessions', SessionListItemSchema) }, guardedErrors),
      },
    },
    async (request) => {
      const { userId, ...query } = request.query;
      return listSessions(context.db, caller(request), { ...query, userId: userId?.toLowerCase() });
    },
  );

  app.get(
    '/api/v2/sessions/:id',
    {
      onRequest: canRead,
      schema: {
        tags,
        security,
        summary: 'Get a session with its messages (answered queries and their feedback), oldest first',
        params: IdParams,
        response: responses({ 200: SessionTranscriptSchema }, [...guardedErrors, 404]),
      },
    },
    async (request) => getTranscript(context.db, caller(request), request.params.id),
  );

  app.patch(
    '/api/v2/sessions/:id',
    {
      onRequest: canWrite,
      schema: {
        tags,
        security,
        summary: 'Replace a session\'s metadata (completed sessions included)',
        params: IdParams,
        body: SessionChangesSchema,
        response: responses({ 200: SessionSchema }, [...guardedErrors, 404]),
      },
    },
    async (request) => {
      assertMetadataSize(request.body.metadata);
      return replaceSessionMetadata(context.db, caller(request), request.params.id, request.body.metadata);
    },
  );

  app.post(
    '/api/v2/sessions/:id/complete',
    {
      onRequest: canWrite,
      schema: {
        tags,
        security,
        summary: 'Mark a session completed: it takes no more queries (completing it again changes nothing)',
        params: IdParams,
        response: responses({ 200: SessionSchema }, [...guardedErrors, 404]),
      },
    },
    async (request) => completeSession(context.db, caller(request), request.params.id),
  );
}
