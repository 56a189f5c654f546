import { Type } from 'typebox';
import type { AppContext } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import type { App } from '../../core/http/app-types.ts';
import { guardedErrors, IdParams, Page, PageQuery, responses } from '../../core/http/schemas.ts';
import { assertKnowledgeBaseAllowed, authorize, caller } from '../auth/guard.ts';
import { KnowledgeBaseChangesSchema, KnowledgeBaseSchema, NewKnowledgeBaseSchema } from './knowledge-bases.schemas.ts';
import {
  createKnowledgeBase,
  deleteKnowledgeBase,
  getKnowledgeBase,
  listKnowledgeBases,
  updateKnowledgeBase,
} from './knowledge-bases.service.ts';

const security = [{ bearerAuth: [] }];
const tags = ['knowledge-bases'];

/** Knowledge bases of the caller's workspace (scopes `knowledge-bases:read|write`). */
export function registerKnowledgeBaseRoutes(app: App, context: AppContext): void {
  const canRead = authorize(context, ['knowledge-bases:read']);
  const canWrite = authorize(context, ['knowledge-bases:write']);

  app.post(
    '/api/v2/knowledge-bases',
    {
      onRequest: canWrite,
      schema: { tags, security, summary: 'Create a knowledge base', body: NewKnowledgeBaseSchema, response: responses({ 201: KnowledgeBaseSchema }, guardedErrors) },
    },
    async (request, reply) => {
      const auth = caller(request);
      if (auth.knowledgeBaseIds) throw new AppError('FORBIDDEN', 'A token restricted to some knowledge bases cannot create new ones.');
      return reply.code(201).send(await createKnowledgeBase(context.db, auth.workspaceId, request.body));
    },
  );

  app.get(
    '/api/v2/knowledge-bases',
    {
      onRequest: canRead,
      schema: {
        tags,
        security,
        summary: 'List knowledge bases, newest first',
        querystring: Type.Object(PageQuery),
        response: responses({ 200: Page('knowledgeBases', KnowledgeBaseSchema) }, guardedErrors),
      },
    },
    async (request) => {
      const auth = caller(request);
      return listKnowledgeBases(context.db, auth.workspaceId, { ...request.query, only: auth.knowledgeBaseIds });
    },
  );

  app.get(
    '/api/v2/knowledge-bases/:id',
    {
      onRequest: canRead,
      schema: { tags, security, summary: 'Get a knowledge base', params: IdParams, response: responses({ 200: KnowledgeBaseSchema }, [...guardedErrors, 404]) },
    },
    async (request) => {
      const auth = caller(request);
      assertKnowledgeBaseAllowed(auth, request.params.id);
      return getKnowledgeBase(context.db, auth.workspaceId, request.params.id);
    },
  );

  app.patch(
    '/api/v2/knowledge-bases/:id',
    {
      onRequest: canWrite,
      schema: {
        tags,
        security,
        summary: 'Change a knowledge base (chunking applies to content ingested afterwards)',
        params: IdParams,
        body: KnowledgeBaseChangesSchema,
        response: responses({ 200: KnowledgeBaseSchema }, [...guardedErrors, 404]),
      },
    },
    async (request) => {
      const auth = caller(request);
      assertKnowledgeBaseAllowed(auth, request.params.id);
      return updateKnowledgeBase(context.db, auth.workspaceId, request.params.id, request.body);
    },
  );

  app.delete(
    '/api/v2/knowledge-bases/:id',
    {
      onRequest: canWrite,
      schema: {
        tags,
        security,
        summary: 'Delete a knowledge base with all its entries, chunks and vectors',
        params: IdParams,
        response: responses({ 204: Type.Null() }, [...guardedErrors, 404]),
      },
    },
    async (request, reply) => {
      const auth = caller(request);
      assertKnowledgeBaseAllowed(auth, request.params.id);
      await deleteKnowledgeBase(context.db, auth.workspaceId, request.params.id);
      return reply.code(204).send();
    },
  );
}
