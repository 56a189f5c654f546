import { Type, type Static } from 'typebox';
import { PageQuery, Timestamp, Uuid } from '../../core/http/schemas.ts';

export const EntrySchema = Type.Object({
  id: Uuid,
  knowledgeBaseId: Uuid,
  sourceId: Uuid,
  recordId: Type.String({ description: 'The record id it was ingested under.' }),
  title: Type.String(),
  contentType: Type.String(),
  url: Type.Union([Type.String(), Type.Null()]),
  tags: Type.Array(Type.String()),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  contentHash: Type.String(),
  chunkCount: Type.Integer(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const ChunkSchema = Type.Object({
  id: Uuid,
  ordinal: Type.Integer(),
  text: Type.String(),
  headingPath: Type.Array(Type.String()),
  start: Type.Integer({ description: 'Character offset of the chunk in the entry content.' }),
  end: Type.Integer(),
  page: Type.Union([Type.Integer(), Type.Null()], { description: 'The page of the document the chunk starts on (PDF files), else null.' }),
});

export const EntryWithChunksSchema = Type.Object({
  ...EntrySchema.properties,
  content: Type.String(),
  chunks: Type.Array(ChunkSchema),
});

export const EntryParams = Type.Object({ id: Uuid, entryId: Uuid });

export const ListEntriesQuery = Type.Object({
  ...PageQuery,
  sourceId: Type.Optional(Uuid),
  tag: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive text the title contains.' })),
});

export type Entry = Static<typeof EntrySchema>;
export type EntryWithChunks = Static<typeof EntryWithChunksSchema>;
export type ListEntriesFilter = Static<typeof ListEntriesQuery>;
