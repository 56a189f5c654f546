import { Type } from 'typebox';

/** The spec's Action: a button shown beside an answer. */
export type Action = {
  id: string;
  label: string;
  icon?: { type: 'svg' | 'url' | 'emoji'; content: string };
  action: { type: 'trigger_handover' | 'open_url' | 'send_event' | 'send_query'; [field: string]: unknown };
  style?: Record<string, unknown>;
  behavior?: Record<string, unknown>;
  visibility?: Record<string, unknown>;
};

/** Fields each action type requires beyond `type` (the spec leaves them open; these are lore's). */
const typeRules = [
  { type: 'trigger_handover', properties: { agentType: { type: 'string', minLength: 1, maxLength: 100 } }, required: [] },
  { type: 'open_url', properties: { url: { type: 'string', format: 'uri', pattern: '^https?://' }, target: { type: 'string', enum: ['_blank', '_self'] } }, required: ['url'] },
  { type: 'send_event', properties: { event: { type: 'string', minLength: 1, maxLength: 100 }, payload: { type: 'object' } }, required: ['event'] },
  { type: 'send_query', properties: { query: { type: 'string', minLength: 1, maxLength: 2000 } }, required: ['query'] },
];

/** JSON Schema of an Action, with type-specific required fields checked by if/then. */
export const ActionSchema = Type.Unsafe<Action>({
  type: 'object',
  required: ['id', 'label', 'action'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 100 },
    label: { type: 'string', minLength: 1, maxLength: 200 },
    icon: {
      type: 'object',
      required: ['type', 'content'],
      additionalProperties: false,
      properties: { type: { type: 'string', enum: ['svg', 'url', 'emoji'] }, content: { type: 'string', minLength: 1, maxLength: 20000 } },
    },
    action: {
      type: 'object',
      required: ['type'],
      properties: { type: { type: 'string', enum: typeRules.map((rule) => rule.type) } },
      allOf: typeRules.map((rule) => ({
        if: { properties: { type: { const: rule.type } }, required: ['type'] },
        then: { required: rule.required, properties: rule.properties },
      })),
    },
    style: { type: 'object' },
    behavior: { type: 'object' },
    visibility: { type: 'object' },
  },
});
