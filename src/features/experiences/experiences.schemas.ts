import { Type, type Static } from 'typebox';
import { StringEnum, Timestamp, Uuid } from '../../core/http/schemas.ts';
import { ToolsSchema } from '../tools/tool.schema.ts';
import { ActionSchema } from './action.schema.ts';

export const DEFAULT_FALLBACK_MESSAGE = 'Sorry, I could not find an answer to that in the knowledge base.';

/**
 * How the chat widget presents an experience. Public: `GET /api/v2/experiences/{id}/widget`
 * serves it to visitors under the same access rules as a query, so nothing secret belongs here.
 */
export const WidgetSettingsSchema = Type.Object(
  {
    assistantName: Type.Optional(Type.String({ minLength: 1, maxLength: 80, description: 'Shown as the panel heading and beside answers; default: the data-title attribute.' })),
    avatarUrl: Type.Optional(
      Type.String({ maxLength: 2000, pattern: '^https://[^\\s]+$', description: 'An https image shown beside answers.' }),
    ),
    greeting: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'The first message of a new conversation (plain text).' })),
    starterQuestions: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 4, description: 'Up to four questions a visitor can ask with one click.' }),
    ),
    imageHosts: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 253, pattern: '^(\\*\\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$' }), {
        maxItems: 20,
        uniqueItems: true,
        description: 'Host names (e.g. images.example.com or *.example.com) whose https images answers may show; others render as links.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ExperienceSettingsSchema = Type.Object(
  {
    topK: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, description: 'Chunks retrieved per query.' })),
    minScore: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'Minimum relevance for a chunk to be used.' })),
    llmProvider: Type.Optional(StringEnum(['extractive', 'openai'], { description: 'Defaults to LLM_PROVIDER.' })),
    llmModel: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    rateLimit: Type.Optional(
      Type.Object(
        {
          ipPerMinute: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000000, description: 'Anonymous queries per minute from one client IP; default RATE_LIMIT_IP_PER_MINUTE.' })),
          sessionPerMinute: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000000, description: 'Anonymous queries per minute in one session; default RATE_LIMIT_SESSION_PER_MINUTE.' })),
        },
        { additionalProperties: false },
      ),
    ),
    widget: Type.Optional(WidgetSettingsSchema),
  },
  { additionalProperties: false },
);

export type WidgetSettings = Static<typeof WidgetSettingsSchema>;

const fields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  knowledgeBaseIds: Type.Array(Uuid, { maxItems: 100, uniqueItems: true, description: 'Knowledge bases of the same workspace.' }),
  requireAuth: Type.Boolean({ description: 'Queries need a bearer token with query:execute.' }),
  allowedOrigins: Type.Array(Type.String({ minLength: 1, maxLength: 300 }), {
    maxItems: 100,
    description: 'Origin patterns such as https://www.example.com or https://*.example.com; empty: any origin.',
  }),
  instructions: Type.String({ maxLength: 10000, description: 'Free text for the answer generator.' }),
  fallbackMessage: Type.String({ minLength: 1, maxLength: 2000, description: 'Answered when nothing relevant is found.' }),
  actions: Type.Array(ActionSchema, { maxItems: 50, description: 'Action templates the query turns into buttons.' }),
  settings: ExperienceSettingsSchema,
  tools: ToolsSchema,
};

export const NewExperienceSchema = Type.Object(
  {
    name: fields.name,
    knowledgeBaseIds: Type.Optional(fields.knowledgeBaseIds),
    requireAuth: Type.Optional(fields.requireAuth),
    allowedOrigins: Type.Optional(fields.allowedOrigins),
    instructions: Type.Optional(fields.instructions),
    fallbackMessage: Type.Optional(fields.fallbackMessage),
    actions: Type.Optional(fields.actions),
    settings: Type.Optional(fields.settings),
    tools: Type.Optional(fields.tools),
  },
  { additionalProperties: false },
);

export const ExperienceChangesSchema = Type.Partial(NewExperienceSchema, { additionalProperties: false, minProperties: 1 });

export const ExperienceSchema = Type.Object({
  id: Uuid,
  workspaceId: Uuid,
  ...fields,
  // Serialized as stored: the request schema already validated each action.
  actions: Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'Action templates (see the request schema).' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export type NewExperience = Static<typeof NewExperienceSchema>;
export type ExperienceChanges = Static<typeof ExperienceChangesSchema>;
export type Experience = Static<typeof ExperienceSchema>;
