import { Type, type Static } from 'typebox';
import { StringEnum } from '../../core/http/schemas.ts';

/** How many tools an experience holds, and properties a tool's parameters declare (issue 37). */
export const MAX_TOOLS = 16;
export const MAX_PARAMETERS = 20;
/** What reads show instead of a header value; a PATCH that sends it keeps the stored value. */
export const MASKED = '***';
export const DEFAULT_TOOL_TIMEOUT_MS = 5000;

/** An HTTP call a tool makes: `{name}` placeholders of `url` are filled from the parameters. */
export const ToolHttpSchema = Type.Object(
  {
    method: StringEnum(['GET', 'POST'], { description: 'GET sends the parameters not in the URL as the query string, POST as a JSON body.' }),
    url: Type.String({ minLength: 1, maxLength: 2000, description: 'An absolute https URL; `{name}` placeholders are parameters, URL-encoded when filled.' }),
    headers: Type.Optional(
      // Names checked with propertyNames, not a pattern key: the body validator removes properties
      // that match no key pattern, which would drop a misspelt header without a word.
      Type.Record(Type.String(), Type.String({ maxLength: 4000, pattern: '^[^\\r\\n\\x00]*$' }), {
        propertyNames: { pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$" },
        maxProperties: 20,
        description: `Write-only: reads show each value as "${MASKED}", and a change that sends "${MASKED}" keeps the stored value.`,
      }),
    ),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 30000, description: `Time limit of the whole call (default ${DEFAULT_TOOL_TIMEOUT_MS}).` })),
  },
  { additionalProperties: false },
);

/** A tool of an experience: an API of the customer's that answers a kind of question. */
export const ToolSchema = Type.Object(
  {
    name: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'Unique within the experience.' }),
    description: Type.String({ minLength: 1, maxLength: 1000, description: 'What the tool does, as the chat model is told.' }),
    parameters: Type.Record(Type.String(), Type.Unknown(), {
      description: `A JSON Schema of type object, with at most ${MAX_PARAMETERS} properties: the arguments of a call.`,
    }),
    http: ToolHttpSchema,
    examples: Type.Array(Type.String({ minLength: 1, maxLength: 500 }), {
      minItems: 1,
      maxItems: 20,
      description: 'Questions the tool answers: the offline generator calls it for questions close to one of these.',
    }),
    answerTemplate: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2000, description: 'The offline answer: `{name}` placeholders filled from the parameters and the top-level fields of the JSON response.' }),
    ),
  },
  { additionalProperties: false },
);

export type Tool = Static<typeof ToolSchema>;

export const ToolsSchema = Type.Array(ToolSchema, { maxItems: MAX_TOOLS, description: 'APIs the answer may call (see docs/tools.md).' });

/** One call a query's answer made, as the session transcript shows it: never a header value. */
export const ToolCallSchema = Type.Object({
  name: Type.String(),
  arguments: Type.Record(Type.String(), Type.Unknown(), { description: 'The arguments as validated (empty when they were not valid JSON).' }),
  httpStatus: Type.Union([Type.Integer(), Type.Null()], { description: 'The API\'s status; null when no answer came (refused, timed out, invalid arguments).' }),
  latencyMs: Type.Integer(),
  outcome: StringEnum(['succeeded', 'failed', 'invalid_arguments', 'refused', 'timed_out'], { description: 'What became of the call.' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why the call failed, in words an operator can act on.' }),
});

export type ToolCall = Static<typeof ToolCallSchema>;
