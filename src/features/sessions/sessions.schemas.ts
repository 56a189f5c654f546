import { Type, type Static } from 'typebox';
import { PageQuery, StringEnum, Timestamp, Uuid } from '../../core/http/schemas.ts';
import { ToolCallSchema } from '../tools/tool.schema.ts';

/**
 * The spec's userId: 1 to 255 characters without whitespace or control characters (stored lower
 * case). `\s` covers Unicode whitespace, `\p{Cc}` the C0/C1 control characters.
 */
export const UserIdSchema = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[^\\s\\p{Cc}]+$',
  description: 'E-mail address, UUID or any string without whitespace or control characters; stored lower case.',
});

export const MetadataSchema = Type.Record(Type.String(), Type.Unknown(), { description: 'Free key/value pairs for tracking.' });

export const SessionSchema = Type.Object({
  id: Uuid,
  experienceId: Uuid,
  userId: Type.Union([Type.String(), Type.Null()]),
  metadata: MetadataSchema,
  status: StringEnum(['active', 'completed']),
  queryCount: Type.Integer(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  lastQueryAt: Type.Union([Timestamp, Type.Null()]),
  completedAt: Type.Union([Timestamp, Type.Null()]),
});

export type Session = Static<typeof SessionSchema>;

/** A session as the list shows it: what a person scanning the list recognises it by. */
export const SessionListItemSchema = Type.Object({
  ...SessionSchema.properties,
  experienceName: Type.String({ description: 'The experience\'s name (also when the experience is deleted).' }),
  firstQuestion: Type.Union([Type.String(), Type.Null()], { description: 'The text of the session\'s first query; null before any.' }),
});

export type SessionListItem = Static<typeof SessionListItemSchema>;

/**
 * The largest `metadata` a session takes, as UTF-8 JSON. Metadata is tracking data (source, device,
 * page path, campaign), a few hundred bytes in practice; 16 KiB leaves room for that while keeping
 * one session row, and a session list of 100, small.
 */
export const MAX_METADATA_BYTES = 16 * 1024;

/** A userId, or null for an anonymous session: one JSON type array, so a bad value reports one error. */
export const OptionalUserIdSchema = Type.Unsafe<string | null>({
  ...UserIdSchema,
  type: ['string', 'null'],
  description: 'E-mail address, UUID or any string without whitespace or control characters; stored lower case. Null or absent: an anonymous session.',
});

export const NewSessionSchema = Type.Object(
  {
    experienceId: Type.String({ format: 'uuid', description: 'An experience of the token\'s workspace that is not deleted.' }),
    userId: Type.Optional(OptionalUserIdSchema),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: `Free key/value pairs, at most ${MAX_METADATA_BYTES} bytes as JSON (default {}).` })),
  },
  { additionalProperties: false },
);

export const SessionChangesSchema = Type.Object(
  {
    metadata: Type.Record(Type.String(), Type.Unknown(), { description: `Replaces the session's metadata; at most ${MAX_METADATA_BYTES} bytes as JSON.` }),
  },
  { additionalProperties: false },
);

/** Filters of the session list; a misspelt filter is a 400 rather than a silently unfiltered list. */
export const SessionListQuerySchema = Type.Object(
  {
    experienceId: Type.Optional(Uuid),
    userId: Type.Optional(UserIdSchema),
    status: Type.Optional(StringEnum(['active', 'completed'])),
    feedback: Type.Optional(StringEnum(['down', 'up'], { description: 'Only sessions with at least one answer rated so.' })),
    unanswered: Type.Optional(
      Type.Boolean({ description: 'true: only sessions with at least one query answered by the fallback message; false: only sessions without one.' }),
    ),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const FeedbackSchema = Type.Object({
  rating: StringEnum(['up', 'down']),
  comment: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String({ format: 'date-time', description: 'When the current rating was given (a later rating replaces an earlier one).' }),
});

/** One answered query of a session, as stored. */
export const MessageSchema = Type.Object({
  queryId: Uuid,
  text: Type.String({ description: 'The question as asked.' }),
  answer: Type.String(),
  format: Type.String({ description: '"markdown".' }),
  // Serialized as stored: the query route built and validated them.
  sources: Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'The sources the answer cites, as in the query response.' }),
  actions: Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'The actions of the query response.' }),
  toolCalls: Type.Array(ToolCallSchema, { description: 'The tool calls the answer made, in order (never a header value).' }),
  metadata: MetadataSchema,
  grounded: Type.Boolean({ description: 'False when the answer is the experience\'s fallback message.' }),
  latencyMs: Type.Integer(),
  askedAt: Timestamp,
  createdAt: Timestamp,
  feedback: Type.Union([FeedbackSchema, Type.Null()]),
});

export const SessionTranscriptSchema = Type.Object({
  ...SessionSchema.properties,
  messages: Type.Array(MessageSchema, { description: 'The session\'s answered queries, oldest first.' }),
});

export type NewSessionInput = Static<typeof NewSessionSchema>;
export type SessionListQuery = Static<typeof SessionListQuerySchema>;
export type Message = Static<typeof MessageSchema>;
export type SessionTranscript = Static<typeof SessionTranscriptSchema>;
