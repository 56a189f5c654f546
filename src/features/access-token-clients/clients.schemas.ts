import { Type } from 'typebox';
import { StringEnum, Timestamp, Uuid } from '../../core/http/schemas.ts';
import { knownScopes } from '../auth/scopes.ts';

export const NewClientSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    scopes: Type.Array(StringEnum(knownScopes), { minItems: 1, uniqueItems: true }),
    knowledgeBaseIds: Type.Optional(
      Type.Union([Type.Array(Uuid, { minItems: 1, maxItems: 1000 }), Type.Null()], {
        description: 'Restricts the client to these knowledge bases; omitted or null: all of the workspace.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ClientSchema = Type.Object({
  id: Uuid,
  workspaceId: Uuid,
  name: Type.String(),
  clientId: Type.String(),
  scopes: Type.Array(Type.String()),
  knowledgeBaseIds: Type.Union([Type.Array(Uuid), Type.Null()]),
  revokedAt: Type.Union([Timestamp, Type.Null()]),
  createdAt: Timestamp,
});

export const CreatedClientSchema = Type.Object({
  ...ClientSchema.properties,
  clientSecret: Type.String({ description: 'Shown once; only a hash is stored.' }),
});
