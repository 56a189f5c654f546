import { Type } from 'typebox';
import type { AppContext } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import type { App } from '../../core/http/app-types.ts';
import { guardedErrors, IdParams, responses } from '../../core/http/schemas.ts';
import { authorize, caller, forgetStanding } from '../auth/guard.ts';
import { missingScopes } from '../auth/scopes.ts';
import type { TokenClaims } from '../auth/tokens.ts';
import { ClientSchema, CreatedClientSchema, NewClientSchema } from './clients.schemas.ts';
import { createClient, getClient, listClients, revokeClient, type NewClient } from './clients.service.ts';

const security = [{ bearerAuth: [] }];
const tags = ['access-token-clients'];

// What a refusal says, per action: the scope a token lacks, or a restriction it would escape.
const refusals = {
  create: {
    scopes: 'A client cannot be given scopes the creating token lacks',
    knowledgeBases: 'A token restricted to some knowledge bases can only create clients restricted to some of them.',
  },
  revoke: {
    scopes: 'A token cannot revoke a client holding scopes it lacks',
    knowledgeBases: 'A token restricted to some knowledge bases can only revoke clients restricted to some of them.',
  },
};

/**
 * A token may only create, or revoke, clients weaker than or equal to itself (403 otherwise).
 * Without this, `clients:write` alone would mint a `*` client, or revoke the workspace's own `*`
 * client; and a token restricted to some knowledge bases would mint, or revoke, an unrestricted one.
 */
function assertWithinCaller(auth: TokenClaims, client: Pick<NewClient, 'scopes' | 'knowledgeBaseIds'>, action: keyof typeof refusals): void {
  const missing = missingScopes(auth.scopes, client.scopes);
  if (missing.length > 0) throw new AppError('FORBIDDEN', `${refusals[action].scopes}: ${missing.join(', ')}.`);
  const allowed = auth.knowledgeBaseIds;
  if (allowed && (!client.knowledgeBaseIds || client.knowledgeBaseIds.some((id) => !allowed.includes(id)))) {
    throw new AppError('FORBIDDEN', refusals[action].knowledgeBases);
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
      assertWithinCaller(auth, request.body, 'create');
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
        summary: 'Revoke a client: its tokens stop working (403 for a client holding scopes or knowledge bases the token lacks)',
        params: IdParams,
        response: responses({ 204: Type.Null() }, [...guardedErrors, 404]),
      },
    },
    async (request, reply) => {
      const auth = caller(request);
      assertWithinCaller(auth, await getClient(context.db, auth.workspaceId, request.params.id), 'revoke');
      await revokeClient(context.db, auth.workspaceId, request.params.id);
      forgetStanding(request.params.id);
      return reply.code(204).send();
    },
  );
}
