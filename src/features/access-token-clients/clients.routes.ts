import { Type } from 'typebox';
import type { AppContext } from '../../core/context.ts';
import type { App } from '../../core/http/app-types.ts';
import { guardedErrors, IdParams, responses } from '../../core/http/schemas.ts';
import { authorize, caller, forgetStanding } from '../auth/guard.ts';
import { ClientSchema, CreatedClientSchema, NewClientSchema } from './clients.schemas.ts';
import { createClient, listClients, revokeClient } from './clients.service.ts';

const security = [{ bearerAuth: [] }];
const tags = ['access-token-clients'];

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
      const { client, clientSecret } = await createClient(context.db, caller(request).workspaceId, request.body);
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
