import { Type } from 'typebox';
import type { AppContext } from '../../core/context.ts';
import type { App } from '../../core/http/app-types.ts';
import { guardedErrors, IdParams, Page, PageQuery, responses } from '../../core/http/schemas.ts';
import { AppError } from '../../core/errors.ts';
import { authorize, caller } from '../auth/guard.ts';
import type { TokenClaims } from '../auth/tokens.ts';
import { getDelivery, listDeliveries, redeliver } from './deliveries.service.ts';
import {
  DeliveryDetailSchema,
  DeliveryParams,
  DeliverySchema,
  NewWebhookSchema,
  WebhookChangesSchema,
  WebhookSchema,
  WebhookWithSecretSchema,
} from './webhooks.schemas.ts';
import { createWebhook, deleteWebhook, getWebhook, listWebhooks, rotateSecret, updateWebhook } from './webhooks.service.ts';

const security = [{ bearerAuth: [] }];
const tags = ['webhooks'];

/**
 * An endpoint receives the events of every knowledge base of the workspace (the job's id, its
 * knowledge base, file name, counts and error). A token restricted to some knowledge bases may
 * read the endpoints and the deliveries of its own jobs, but not create, point, sign for or delete
 * one: each would give it, or take from others, the events of the other knowledge bases.
 */
function assertUnrestricted(auth: TokenClaims): TokenClaims {
  if (auth.knowledgeBaseIds) {
    throw new AppError('FORBIDDEN', 'A token restricted to some knowledge bases cannot manage webhook endpoints: they receive the events of every knowledge base.');
  }
  return auth;
}

/** Webhook endpoints of the caller's workspace and their deliveries (scopes `webhooks:read|write`). */
export function registerWebhookRoutes(app: App, context: AppContext): void {
  const canRead = authorize(context, ['webhooks:read']);
  const canWrite = authorize(context, ['webhooks:write']);
  const rules = context.config.webhooks;

  app.post(
    '/api/v2/webhooks',
    {
      onRequest: canWrite,
      schema: {
        tags,
        security,
        summary: 'Create a webhook endpoint (its signing secret is shown only here and at rotation)',
        body: NewWebhookSchema,
        response: responses({ 201: WebhookWithSecretSchema }, guardedErrors),
      },
    },
    async (request, reply) => reply.code(201).send(await createWebhook(context.db, assertUnrestricted(caller(request)).workspaceId, request.body, rules)),
  );

  app.get(
    '/api/v2/webhooks',
    {
      onRequest: canRead,
      schema: {
        tags,
        security,
        summary: 'List webhook endpoints, newest first',
        querystring: Type.Object(PageQuery),
        response: responses({ 200: Page('webhooks', WebhookSchema) }, guardedErrors),
      },
    },
    async (request) => listWebhooks(context.db, caller(request).workspaceId, request.query),
  );

  app.get(
    '/api/v2/webhooks/:id',
    {
      onRequest: canRead,
      schema: { tags, security, summary: 'Get a webhook endpoint', params: IdParams, response: responses({ 200: WebhookSchema }, [...guardedErrors, 404]) },
    },
    async (request) => getWebhook(context.db, caller(request).workspaceId, request.params.id),
  );

  app.patch(
    '/api/v2/webhooks/:id',
    {
      onRequest: canWrite,
      schema: {
        tags,
        security,
        summary: 'Change a webhook endpoint; enabled: true re-enables it and clears disabledReason',
        params: IdParams,
        body: WebhookChangesSchema,
        response: responses({ 200: WebhookSchema }, [...guardedErrors, 404]),
      },
    },
    async (request) => updateWebhook(context.db, assertUnrestricted(caller(request)).workspaceId, request.params.id, request.body, rules),
  );

  app.delete(
    '/api/v2/webhooks/:id',
    {
      onRequest: canWrite,
      schema: { tags, security, summary: 'Delete a webhook endpoint and its deliveries', params: IdParams, response: responses({ 204: Type.Null() }, [...guardedErrors, 404]) },
    },
    async (request, reply) => {
      await deleteWebhook(context.db, assertUnrestricted(caller(request)).workspaceId, request.params.id);
      return reply.code(204).send();
    },
  );

  app.post(
    '/api/v2/webhooks/:id/rotate-secret',
    {
      onRequest: canWrite,
      schema: {
        tags,
        security,
        summary: 'Rotate the signing secret (the previous one keeps signing beside it for 24 hours)',
        params: IdParams,
        response: responses({ 200: WebhookWithSecretSchema }, [...guardedErrors, 404]),
      },
    },
    async (request) => rotateSecret(context.db, assertUnrestricted(caller(request)).workspaceId, request.params.id),
  );

  app.get(
    '/api/v2/webhooks/:id/deliveries',
    {
      onRequest: canRead,
      schema: {
        tags,
        security,
        summary: 'List an endpoint\'s deliveries, newest first',
        params: IdParams,
        querystring: Type.Object(PageQuery),
        response: responses({ 200: Page('deliveries', DeliverySchema) }, [...guardedErrors, 404]),
      },
    },
    async (request) => listDeliveries(context.db, caller(request), request.params.id, request.query),
  );

  app.get(
    '/api/v2/webhooks/:id/deliveries/:deliveryId',
    {
      onRequest: canRead,
      schema: {
        tags,
        security,
        summary: 'Get a delivery with every attempt and its payload',
        params: DeliveryParams,
        response: responses({ 200: DeliveryDetailSchema }, [...guardedErrors, 404]),
      },
    },
    async (request) => getDelivery(context.db, caller(request), request.params.id, request.params.deliveryId),
  );

  app.post(
    '/api/v2/webhooks/:id/deliveries/:deliveryId/redeliver',
    {
      onRequest: canWrite,
      schema: {
        tags,
        security,
        summary: 'Queue a delivery again now, with the same webhook-id',
        params: DeliveryParams,
        response: responses({ 202: Type.Null() }, [...guardedErrors, 404, 409]),
      },
    },
    async (request, reply) => {
      const { id, deliveryId } = request.params;
      await redeliver(context.db, caller(request), id, deliveryId);
      return reply.code(202).send();
    },
  );
}
