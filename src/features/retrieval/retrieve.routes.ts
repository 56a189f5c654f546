import { Type } from 'typebox';
import type { AppContext } from '../../core/context.ts';
import type { App } from '../../core/http/app-types.ts';
import { guardedErrors, IdParams, responses, StringEnum, Uuid } from '../../core/http/schemas.ts';
import { assertKnowledgeBaseAllowed, authorize, caller } from '../auth/guard.ts';
import { getKnowledgeBase } from '../knowledge-bases/knowledge-bases.service.ts';
import { retrieve } from './retrieve.service.ts';

const RetrieveBody = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 4000 }),
    topK: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
    mode: StringEnum(['hybrid', 'vector', 'keyword'], { default: 'hybrid' }),
    filter: Type.Optional(
      Type.Object(
        {
          tags: Type.Optional(Type.Array(Type.String(), { maxItems: 100, description: 'Entries with any of these tags.' })),
          contentType: Type.Optional(Type.Array(StringEnum(['text', 'markdown', 'code', 'qa_pair']), { maxItems: 4 })),
          metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Entries whose metadata contains these values.' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const RetrievedSchema = Type.Object({
  chunkId: Uuid,
  entryId: Uuid,
  knowledgeBaseId: Uuid,
  recordId: Type.String(),
  title: Type.String(),
  url: Type.Union([Type.String(), Type.Null()]),
  text: Type.String(),
  headingPath: Type.Array(Type.String()),
  ordinal: Type.Integer(),
  page: Type.Union([Type.Integer(), Type.Null()], { description: 'The page of the document the chunk starts on (PDF files), else null.' }),
  score: Type.Number(),
  vectorScore: Type.Union([Type.Number(), Type.Null()]),
  keywordScore: Type.Union([Type.Number(), Type.Null()]),
});

/** POST /api/v2/knowledge-bases/{id}/retrieve: ranked chunks, the retrieval the query answers are built on. */
export function registerRetrieveRoutes(app: App, context: AppContext): void {
  app.post(
    '/api/v2/knowledge-bases/:id/retrieve',
    {
      onRequest: authorize(context, ['knowledge-bases:read']),
      schema: {
        tags: ['knowledge-bases'],
        security: [{ bearerAuth: [] }],
        summary: 'Retrieve the chunks that best match a query (hybrid: keyword BM25 and vector similarity, fused)',
        params: IdParams,
        body: RetrieveBody,
        response: responses({ 200: Type.Object({ mode: Type.String(), results: Type.Array(RetrievedSchema) }) }, [...guardedErrors, 404]),
      },
    },
    async (request) => {
      const auth = caller(request);
      assertKnowledgeBaseAllowed(auth, request.params.id);
      await getKnowledgeBase(context.db, auth.workspaceId, request.params.id);
      const { query, topK, mode, filter } = request.body;
      const results = await retrieve(context.db, context.embedder, {
        workspaceId: auth.workspaceId,
        knowledgeBaseIds: [request.params.id],
        query,
        topK,
        mode,
        filter,
      });
      return { mode, results };
    },
  );
}
