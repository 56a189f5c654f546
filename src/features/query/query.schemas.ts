import { Type, type Static } from 'typebox';
import { StringEnum, Timestamp, Uuid } from '../../core/http/schemas.ts';
import { MetadataSchema, OptionalUserIdSchema } from '../sessions/sessions.schemas.ts';

/** Longest question: a chat message, not a document (the spec leaves it open). */
export const MAX_QUESTION_LENGTH = 4000;

export const QueryBodySchema = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: MAX_QUESTION_LENGTH, pattern: '\\S', description: "The user's question or message." }),
    experienceId: Uuid,
    userId: Type.Optional(OptionalUserIdSchema),
    sessionId: Type.Optional(Type.Union([Uuid, Type.Null()])),
    timestamp: Type.Optional(Timestamp),
    metadata: Type.Optional(MetadataSchema),
  },
  { additionalProperties: false },
);

export const SourceSchema = Type.Object({
  number: Type.Integer({ description: 'What the answer\'s citations [n] point at.' }),
  entryId: Uuid,
  title: Type.String(),
  url: Type.Union([Type.String(), Type.Null()]),
  snippet: Type.String(),
  score: Type.Number({ description: 'Relevance from 0 to 1.' }),
  metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Where in the document: `page` (from 1) for a PDF.' })),
});

/** Actions are serialized as built: each validated against the spec's Action when it was built. */
const ActionOut = Type.Object({}, { additionalProperties: true });

export const QueryResponseSchema = Type.Object({
  queryId: Uuid,
  answer: Type.String(),
  sessionId: Uuid,
  timestamp: Timestamp,
  format: StringEnum(['markdown']),
  actions: Type.Array(ActionOut),
  sources: Type.Array(SourceSchema),
});

export const FeedbackBodySchema = Type.Object(
  {
    rating: StringEnum(['up', 'down']),
    comment: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);

export const QueryIdParams = Type.Object({ queryId: Uuid });

export type QueryBody = Static<typeof QueryBodySchema>;
export type Source = Static<typeof SourceSchema>;
export type QueryResponse = Static<typeof QueryResponseSchema>;
