import { Type } from 'typebox';
import type { AppContext } from '../../core/context.ts';
import type { App } from '../../core/http/app-types.ts';
import { IdParams, Page, PageQuery, responses, StringEnum, Timestamp, Uuid } from '../../core/http/schemas.ts';
import { CreatedClientSchema, NewClientSchema } from '../access-token-clients/clients.schemas.ts';
import { createClient } from '../access-token-clients/clients.service.ts';
import { authorizeAdmin, forgetAllStandings } from '../auth/guard.ts';
import { createWorkspace, getWorkspace, listWorkspaces, updateWorkspace } from './workspaces.service.ts';

const WorkspaceSchema = Type.Object({
  id: Uuid,
  name: Type.String(),
  status: StringEnum(['active', 'suspended']),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const security = [{ adminKey: [] }];
const tags = ['admin'];

/** Platform administration: workspaces and their first clients, behind ADMIN_API_KEY. */
export function registerWorkspaceAdminRoutes(app: App, context: AppContext): void {
  const onRequest = authorizeAdmin(context);

  app.post(
    '/api/v2/admin/workspaces',
    {
      onRequest,
      schema: {
        tags,
        security,
        summary: 'Create a workspace',
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
        response: responses({ 201: WorkspaceSchema }, [400, 401]),
      },
    },
    async (request, reply) => reply.code(201).send(await createWorkspace(context.db, request.body.name)),
  );

  app.get(
    '/api/v2/admin/workspaces',
    {
      onRequest,
      schema: {
        tags,
        security,
        summary: 'List workspaces, newest first',
        querystring: Type.Object(PageQuery),
        response: responses({ 200: Page('workspaces', WorkspaceSchema) }, [400, 401]),
      },
    },
    async (request) => listWorkspaces(context.db, request.query),
  );

  app.get(
    '/api/v2/admin/workspaces/:id',
    {
      onRequest,
      schema: { tags, security, summary: 'Get a workspace', params: IdParams, response: responses({ 200: WorkspaceSchema }, [400, 401, 404]) },
    },
    async (request) => getWorkspace(context.db, request.params.id),
  );

  app.patch(
    '/api/v2/admin/workspaces/:id',
    {
      onRequest,
      schema: {
        tags,
        security,
        summary: 'Rename a workspace or change its status (suspended workspaces answer nothing)',
        params: IdParams,
        body: Type.Object(
          { name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), status: Type.Optional(StringEnum(['active', 'suspended'])) },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: responses({ 200: WorkspaceSchema }, [400, 401, 404]),
      },
    },
    async (request) => {
      const workspace = await updateWorkspace(context.db, request.params.id, request.body);
      if (request.body.status) forgetAllStandings();
      return workspace;
    },
  );

  app.post(
    '/api/v2/admin/workspaces/:id/access-token-clients',
    {
      onRequest,
      schema: {
        tags,
        security,
        summary: 'Create an access-token client in a workspace (the secret is shown once)',
        params: IdParams,
        body: NewClientSchema,
        response: responses({ 201: CreatedClientSchema }, [400, 401, 404]),
      },
    },
    async (request, reply) => {
      await getWorkspace(context.db, request.params.id);
      const { client, clientSecret } = await createClient(context.db, request.params.id, request.body);
      return reply.code(201).send({ ...client, clientSecret });
    },
  );
}
