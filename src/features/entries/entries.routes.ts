import { Type } from 'typebox';
import type { AppContext } from '../../core/context.ts';
import type { App } from '../../core/http/app-types.ts';
import { guardedErrors, IdParams, responses } from '../../core/http/schemas.ts';
import { assertKnowledgeBaseAllowed, authorize, caller } from '../auth/guard.ts';
import { getKnowledgeBase } from '../knowledge-bases/knowledge-bases.service.ts';
import { EntryParams, EntrySchema, EntryWithChunksSchema, ListEntriesQuery } from './entries.schemas.ts';
import { deleteEntry, getEntry, listEntries } from './entries.service.ts';

const security = [{ bearerAuth: [] }];
const tags = ['knowledge-bases'];

/** What a knowledge base holds: its entries and their chunks (scopes `knowledge-bases:read|write`). */
export function registerEntryRoutes(app: App, context: AppContext): void {
  const canRead = authorize(context, ['knowledge-bases:read']);
  const canWrite = authorize(context, ['knowledge-bases:write']);

  app.get(
    '/api/v2/knowledge-bases/:id/entries',
    {
      onRequest: canRead,
      schema: {
        tags,
        security,
        summary: 'List the entries of a knowledge base, newest first',
        params: IdParams,
        querystring: ListEntriesQuery,
        response: responses({ 200: Type.Object({ total: Type.Integer(), entries: Type.Array(EntrySchema) }) }, [...guardedErrors, 404]),
      },
    },
    async (request) => {
      const auth = caller(request);
      assertKnowledgeBaseAllowed(auth, request.params.id);
      await getKnowledgeBase(context.db, auth.workspaceId, request.params.id);
      return listEntries(context.db, auth.workspaceId, request.params.id, request.query);
    },
  );

  app.get(
    '/api/v2/knowledge-bases/:id/entries/:entryId',
    {
      onRequest: canRead,
      schema: {
        tags,
        security,
        summary: 'Get an entry with its content and chunks',
        params: EntryParams,
        response: responses({ 200: EntryWithChunksSchema }, [...guardedErrors, 404]),
      },
    },
    async (request) => {
      const auth = caller(request);
      assertKnowledgeBaseAllowed(auth, request.params.id);
      return getEntry(context.db, auth.workspaceId, request.params.id, request.params.entryId);
    },
  );

  app.delete(
    '/api/v2/knowledge-bases/:id/entries/:entryId',
    {
      onRequest: canWrite,
      schema: {
        tags,
        security,
        summary: 'Delete an entry with its chunks and vectors',
        params: EntryParams,
        response: responses({ 204: Type.Null() }, [...guardedErrors, 404]),
      },
    },
    async (request, reply) => {
      const auth = caller(request);
      assertKnowledgeBaseAllowed(auth, request.params.id);
      await deleteEntry(context.db, auth.workspaceId, request.params.id, request.params.entryId);
      return reply.code(204).send();
    },
  );
}
