import { Type, type Static } from 'typebox';
import type { AppContext } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import type { App } from '../../core/http/app-types.ts';
import { guardedErrors, IdParams, responses } from '../../core/http/schemas.ts';
import { authorize, caller, forgetStanding } from '../auth/guard.ts';
import { missingScopes } from '../auth/scopes.ts';
import type { TokenClaims } from '../auth/tokens.ts';
import { ClientSchema, CreatedClientSchema, NewClientSchema } from './clients.schemas.ts';
import { createClient, listClients, revokeClient } from './clients.service.ts';

const security = [{ bearerAuth: [] }];
const tags = ['access-token-clients'];

/**
 * A token may only create clients weaker than or equal to itself: without this, `clients:write`
 * alone would mint a `*` client, and a token restricted to some knowledge bases an unrestricted one.
 */
function assertNoEscalation(auth: TokenClaims, input: Static<typeof NewClientSchema>): void {
  const missing = missingScopes(auth.scopes, input.scopes);
  if (missing.length > 0) {
    throw new AppError('FORBIDDEN', `A client cannot be given scopes the creating token lacks: ${missing.join(', ')}.`);
  }
  const allowed = auth.knowledgeBaseIds;
  if (allowed && (!input.knowledgeBaseIds || input.knowledgeBaseIds.some((id) => !allowed.includes(id)))) {
    throw new AppError('FORBIDDEN', 'A token restricted to some knowledge bases can only create clients restricted to some of them.');
  }
}

/** Access-token clients of the caller's own workspace (scope `clients:write`). */
export function registerClientRoutes(app: App, context: AppContext): void {
  const onRequest = authorize(context, ['clients:write']);

  app.post(
    '/api/v2/access-token-clients',
    {
      onRequest,
      schema: {
        tags,
        security,
        summary: 'Create a client in the caller\'s workspace (the secret is shown once)',
        body: NewClientSchema,
        response: responses({ 201: CreatedClientSchema }, guardedErrors),
      },
    },
    async (request, reply) => {
      const auth = caller(request);
      assertNoEscalation(auth, request.body);
      const { client, clientSecret } = await createClient(context.db, auth.workspaceId, request.body);
      return reply.code(201).send({ ...client, clientSecret });
    },
  );

  app.get(
    '/api/v2/access-token-clients',
    {
      onRequest,
      schema: {
        tags,
        security,
        summary: 'List the workspace\'s clients, newest first',
        response: responses({ 200: Type.Object({ clients: Type.Array(ClientSchema) }) }, guardedErrors),
      },
    },
    async (request) => ({ clients: await listClients(context.db, caller(request).workspaceId) }),
  );

  app.delete(
    '/api/v2/access-token-clients/:id',
    {
      onRequest,
      schema: {
        tags,
        security,
        summary: 'Revoke a client: its tokens stop working',
        params: IdParams,
        response: responses({ 204: Type.Null() }, [...guardedErrors, 404]),
      },
    },
    async (request, reply) => {
      await revokeClient(context.db, caller(request).workspaceId, request.params.id);
      forgetStanding(request.params.id);
      return reply.code(204).send();
    },
  );
}
