import { Type, type Static } from 'typebox';
import { Timestamp, Uuid } from '../../core/http/schemas.ts';

const chunking = {
  chunkSize: Type.Integer({ minimum: 100, maximum: 8000, description: 'Target chunk length in characters (default 800).' }),
  chunkOverlap: Type.Integer({ minimum: 0, maximum: 4000, description: 'Characters shared by neighbouring chunks (default 100); below chunkSize.' }),
};

export const NewKnowledgeBaseSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    chunkSize: Type.Optional(chunking.chunkSize),
    chunkOverlap: Type.Optional(chunking.chunkOverlap),
  },
  { additionalProperties: false },
);

export const KnowledgeBaseChangesSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    chunkSize: Type.Optional(chunking.chunkSize),
    chunkOverlap: Type.Optional(chunking.chunkOverlap),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const KnowledgeBaseSchema = Type.Object({
  id: Uuid,
  workspaceId: Uuid,
  name: Type.String(),
  description: Type.String(),
  chunkSize: Type.Integer(),
  chunkOverlap: Type.Integer(),
  embedding: Type.Union(
    [Type.Object({ provider: Type.String(), model: Type.String(), dimension: Type.Integer() }), Type.Null()],
    { description: 'The provider, model and dimension of its vectors; null until the first ingestion.' },
  ),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export type NewKnowledgeBase = Static<typeof NewKnowledgeBaseSchema>;
export type KnowledgeBaseChanges = Static<typeof KnowledgeBaseChangesSchema>;
export type KnowledgeBase = Static<typeof KnowledgeBaseSchema>;
