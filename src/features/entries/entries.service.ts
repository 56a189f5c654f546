import type { Db } from '../../core/db/db.ts';
import { notFound } from '../../core/errors.ts';
import type { Entry, EntryWithChunks, ListEntriesFilter } from './entries.schemas.ts';

type EntryRow = {
  id: string;
  knowledge_base_id: string;
  source_id: string;
  record_id: string;
  title: string;
  content_type: string;
  url: string | null;
  tags: string[];
  metadata: Record<string, unknown>;
  content_hash: string;
  chunk_count: number;
  created_at: Date;
  updated_at: Date;
};

const columns = `id, knowledge_base_id, source_id, record_id, title, content_type, url, tags, metadata,
  content_hash, chunk_count, created_at, updated_at`;

function toEntry(row: EntryRow): Entry {
  return {
    id: row.id,
    knowledgeBaseId: row.knowledge_base_id,
    sourceId: row.source_id,
    recordId: row.record_id,
    title: row.title,
    contentType: row.content_type,
    url: row.url,
    tags: row.tags,
    metadata: row.metadata,
    contentHash: row.content_hash,
    chunkCount: row.chunk_count,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** `%` and `_` in the caller's text are literal characters, not LIKE wildcards. */
function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

/** A knowledge base's entries, newest first, filtered by source, tag and title text. */
export async function listEntries(
  db: Db,
  workspaceId: string,
  knowledgeBaseId: string,
  filter: ListEntriesFilter,
): Promise<{ total: number; entries: Entry[] }> {
  const where = `workspace_id = $1 AND knowledge_base_id = $2 AND ($3::uuid IS NULL OR source_id = $3)
    AND ($4::text IS NULL OR tags @> ARRAY[$4::text]) AND ($5::text IS NULL OR title ILIKE $5)`;
  const values = [workspaceId, knowledgeBaseId, filter.sourceId ?? null, filter.tag ?? null, filter.q ? likePattern(filter.q) : null];
  const [{ rows }, count] = await Promise.all([
    db.query<EntryRow>(`SELECT ${columns} FROM entries WHERE ${where} ORDER BY created_at DESC, id LIMIT $6 OFFSET $7`, [
      ...values,
      filter.limit,
      filter.offset,
    ]),
    db.query<{ total: number }>(`SELECT count(*)::int AS total FROM entries WHERE ${where}`, values),
  ]);
  return { total: count.rows[0]!.total, entries: rows.map(toEntry) };
}

/** An entry with its content and chunks; 404 when it is not in this workspace's knowledge base. */
export async function getEntry(db: Db, workspaceId: string, knowledgeBaseId: string, entryId: string): Promise<EntryWithChunks> {
  const { rows } = await db.query<EntryRow & { content: string }>(
    `SELECT ${columns}, content FROM entries WHERE workspace_id = $1 AND knowledge_base_id = $2 AND id = $3`,
    [workspaceId, knowledgeBaseId, entryId],
  );
  const row = rows[0];
  if (!row) throw notFound('Entry', entryId);
  const chunks = await db.query<{ id: string; ordinal: number; text: string; heading_path: string[]; start_offset: number; end_offset: number; page: number | null }>(
    `SELECT id, ordinal, text, heading_path, start_offset, end_offset, page FROM chunks
     WHERE workspace_id = $1 AND entry_id = $2 ORDER BY ordinal`,
    [workspaceId, entryId],
  );
  return {
    ...toEntry(row),
    content: row.content,
    chunks: chunks.rows.map((chunk) => ({
      id: chunk.id,
      ordinal: chunk.ordinal,
      text: chunk.text,
      headingPath: chunk.heading_path,
      start: chunk.start_offset,
      end: chunk.end_offset,
      page: chunk.page,
    })),
  };
}

/** Deletes an entry with its chunks and their vectors (one statement: the chunks cascade). */
export async function deleteEntry(db: Db, workspaceId: string, knowledgeBaseId: string, entryId: string): Promise<void> {
  const { rowCount } = await db.query('DELETE FROM entries WHERE workspace_id = $1 AND knowledge_base_id = $2 AND id = $3', [
    workspaceId,
    knowledgeBaseId,
    entryId,
  ]);
  if (rowCount === 0) throw notFound('Entry', entryId);
}
