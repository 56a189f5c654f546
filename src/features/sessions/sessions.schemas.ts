import { Type, type Static } from 'typebox';
import { StringEnum, Timestamp, Uuid } from '../../core/http/schemas.ts';

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
