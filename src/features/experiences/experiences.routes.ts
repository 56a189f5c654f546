import { Type } from 'typebox';
import type { AppContext } from '../../core/context.ts';
import type { App } from '../../core/http/app-types.ts';
import { guardedErrors, IdParams, Page, PageQuery, responses } from '../../core/http/schemas.ts';
import { assertKnowledgeBaseAllowed, authorize, caller } from '../auth/guard.ts';
import type { TokenClaims } from '../auth/tokens.ts';
import { ExperienceChangesSchema, ExperienceSchema, NewExperienceSchema } from './experiences.schemas.ts';
import { registerToolTestRoute } from './tool-test.routes.ts';
import { createExperience, deleteExperience, getExperience, listExperiences, publicExperience, updateExperience } from './experiences.service.ts';

const security = [{ bearerAuth: [] }];

/** A token restricted to some knowledge bases may only link an experience to those. */
function assertLinkable(auth: TokenClaims, knowledgeBaseIds: string[] | undefined): void {
  for (const id of knowledgeBaseIds ?? []) assertKnowledgeBaseAllowed(auth, id);
}
const tags = ['experiences'];

/**
 * Experiences of the caller's workspace (scopes `experiences:read|write`). A token restricted to
 * some knowledge bases reaches only the experiences linking none but those (others: 404, unlisted).
 */
export function registerExperienceRoutes(app: App, context: AppContext): void {
  const canRead = authorize(context, ['experiences:read']);
  const canWrite = authorize(context, ['experiences:write']);
  registerToolTestRoute(app, context);

  app.post(
    '/api/v2/experiences',
    {
      onRequest: canWrite,
      schema: { tags, security, summary: 'Create an experience', body: NewExperienceSchema, response: responses({ 201: ExperienceSchema }, guardedErrors) },
    },
    async (request, reply) => {
      const auth = caller(request);
      assertLinkable(auth, request.body.knowledgeBaseIds);
      return reply.code(201).send(publicExperience(await createExperience(context.db, auth.workspaceId, request.body, context.config.tools)));
    },
  );

  app.get(
    '/api/v2/experiences',
    {
      onRequest: canRead,
      schema: {
        tags,
        security,
        summary: 'List experiences that are not deleted, newest first',
        querystring: Type.Object(PageQuery),
        response: responses({ 200: Page('experiences', ExperienceSchema) }, guardedErrors),
      },
    },
    async (request) => {
      const page = await listExperiences(context.db, caller(request), request.query);
      return { ...page, experiences: page.experiences.map(publicExperience) };
    },
  );

  app.get(
    '/api/v2/experiences/:id',
    {
      onRequest: canRead,
      schema: { tags, security, summary: 'Get an experience', params: IdParams, response: responses({ 200: ExperienceSchema }, [...guardedErrors, 404]) },
    },
    async (request) => publicExperience(await getExperience(context.db, caller(request), request.params.id)),
  );

  app.patch(
    '/api/v2/experiences/:id',
    {
      onRequest: canWrite,
      schema: {
        tags,
        security,
        summary: 'Change an experience',
        params: IdParams,
        body: ExperienceChangesSchema,
        response: responses({ 200: ExperienceSchema }, [...guardedErrors, 404]),
      },
    },
    async (request) => {
      const auth = caller(request);
      assertLinkable(auth, request.body.knowledgeBaseIds);
      return publicExperience(await updateExperience(context.db, auth, request.params.id, request.body, context.config.tools));
    },
  );

  app.delete(
    '/api/v2/experiences/:id',
    {
      onRequest: canWrite,
      schema: {
        tags,
        security,
        summary: 'Delete an experience: queries to it answer 404 from then on',
        params: IdParams,
        response: responses({ 204: Type.Null() }, [...guardedErrors, 404]),
      },
    },
    async (request, reply) => {
      await deleteExperience(context.db, caller(request), request.params.id);
      return reply.code(204).send();
    },
  );
}
