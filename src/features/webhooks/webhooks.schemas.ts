import { Type, type Static } from 'typebox';
import { StringEnum, Timestamp, Uuid } from '../../core/http/schemas.ts';

/** The events an endpoint can subscribe to: a job's life. */
export const webhookEvents = ['job.started', 'job.progress', 'job.completed', 'job.failed', 'job.cancelled'] as const;
export type WebhookEvent = (typeof webhookEvents)[number];

const fields = {
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'https URL that receives the events (http only with WEBHOOKS_ALLOW_HTTP=true).' }),
  events: Type.Array(StringEnum(webhookEvents), { minItems: 1, uniqueItems: true }),
  description: Type.String({ maxLength: 2000 }),
};

export const NewWebhookSchema = Type.Object(
  { url: fields.url, events: fields.events, description: Type.Optional(fields.description) },
  { additionalProperties: false },
);

export const WebhookChangesSchema = Type.Object(
  {
    url: Type.Optional(fields.url),
    events: Type.Optional(fields.events),
    description: Type.Optional(fields.description),
    enabled: Type.Optional(Type.Boolean({ description: 'true re-enables a disabled endpoint and clears disabledReason.' })),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const WebhookSchema = Type.Object({
  id: Uuid,
  url: Type.String(),
  events: Type.Array(StringEnum(webhookEvents)),
  description: Type.String(),
  enabled: Type.Boolean(),
  disabledReason: Type.Union([Type.String(), Type.Null()], { description: 'Why lore disabled the endpoint; null when enabled or disabled by hand.' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const WebhookWithSecretSchema = Type.Object({
  ...WebhookSchema.properties,
  secret: Type.String({ description: 'The signing secret (whsec_…), shown only at creation and rotation.' }),
});

const AttemptSchema = Type.Object({
  at: Timestamp,
  statusCode: Type.Union([Type.Integer(), Type.Null()], { description: 'null when no HTTP answer came (refused, timed out, unreachable).' }),
  latencyMs: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
});

export const DeliverySchema = Type.Object({
  id: Uuid,
  event: StringEnum(webhookEvents),
  jobId: Uuid,
  status: StringEnum(['pending', 'delivered', 'failed']),
  attempts: Type.Integer({ description: 'Attempts so far.' }),
  nextAttemptAt: Type.Union([Timestamp, Type.Null()], { description: 'When a pending delivery is tried next; null once delivered or failed.' }),
  lastAttempt: Type.Union([AttemptSchema, Type.Null()]),
  createdAt: Timestamp,
});

export const DeliveryDetailSchema = Type.Object({
  ...DeliverySchema.properties,
  attemptLog: Type.Array(AttemptSchema, { description: 'Every attempt, oldest first.' }),
  payload: Type.Unsafe<unknown>({ type: 'object', additionalProperties: true, description: 'The body sent: {type, timestamp, data}.' }),
});

export const DeliveryParams = Type.Object({ id: Uuid, deliveryId: Uuid });

export type NewWebhook = Static<typeof NewWebhookSchema>;
export type WebhookChanges = Static<typeof WebhookChangesSchema>;
export type Webhook = Static<typeof WebhookSchema>;
export type Delivery = Static<typeof DeliverySchema>;
export type DeliveryDetail = Static<typeof DeliveryDetailSchema>;
export type Attempt = Static<typeof AttemptSchema>;
