import type { Db, Queryable } from '../../core/db/db.ts';
import { AppError, notFound } from '../../core/errors.ts';
import type { KnowledgeBase, KnowledgeBaseChanges, NewKnowledgeBase } from './knowledge-bases.schemas.ts';

type KnowledgeBaseRow = {
  id: string;
  workspace_id: string;
  name: string;
  description: string;
  chunk_size: number;
  chunk_overlap: number;
  embedding_provider: string | null;
  embedding_model: string | null;
  embedding_dimension: number | null;
  created_at: Date;
  updated_at: Date;
};

const columns = `id, workspace_id, name, description, chunk_size, chunk_overlap,
  embedding_provider, embedding_model, embedding_dimension, created_at, updated_at`;

function toKnowledgeBase(row: KnowledgeBaseRow): KnowledgeBase {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    name: row.name,
    description: row.description,
    chunkSize: row.chunk_size,
    chunkOverlap: row.chunk_overlap,
    embedding:
      row.embedding_provider && row.embedding_model && row.embedding_dimension
        ? { provider: row.embedding_provider, model: row.embedding_model, dimension: row.embedding_dimension }
        : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function assertChunking(chunkSize: number, chunkOverlap: number): void {
  if (chunkOverlap >= chunkSize) {
    throw new AppError('VALIDATION_FAILED', 'chunkOverlap must be smaller than chunkSize.', {
      errors: [{ path: '/chunkOverlap', message: `must be smaller than chunkSize (${chunkSize})` }],
    });
  }
}

export async function createKnowledgeBase(db: Db, workspaceId: string, input: NewKnowledgeBase): Promise<KnowledgeBase> {
  const chunkSize = input.chunkSize ?? 800;
  const chunkOverlap = input.chunkOverlap ?? Math.min(100, Math.floor(chunkSize / 4));
  assertChunking(chunkSize, chunkOverlap);
  const { rows } = await db.query<KnowledgeBaseRow>(
    `INSERT INTO knowledge_bases (workspace_id, name, description, chunk_size, chunk_overlap)
     VALUES ($1, $2, $3, $4, $5) RETURNING ${columns}`,
    [workspaceId, input.name, input.description ?? '', chunkSize, chunkOverlap],
  );
  return toKnowledgeBase(rows[0]!);
}

/** Lists a workspace's knowledge bases, newest first; `only` narrows to a token's allowed ones. */
export async function listKnowledgeBases(
  db: Db,
  workspaceId: string,
  page: { limit: number; offset: number; only?: string[] | undefined },
): Promise<{ total: number; knowledgeBases: KnowledgeBase[] }> {
  const only = page.only ?? null;
  const [{ rows }, count] = await Promise.all([
    db.query<KnowledgeBaseRow>(
      `SELECT ${columns} FROM knowledge_bases
       WHERE workspace_id = $1 AND ($2::uuid[] IS NULL OR id = ANY($2::uuid[]))
       ORDER BY created_at DESC, id LIMIT $3 OFFSET $4`,
      [workspaceId, only, page.limit, page.offset],
    ),
    db.query<{ total: number }>(
      `SELECT count(*)::int AS total FROM knowledge_bases
       WHERE workspace_id = $1 AND ($2::uuid[] IS NULL OR id = ANY($2::uuid[]))`,
      [workspaceId, only],
    ),
  ]);
  return { total: count.rows[0]!.total, knowledgeBases: rows.map(toKnowledgeBase) };
}

/** A knowledge base of the workspace; 404 when it does not exist there. */
export async function getKnowledgeBase(db: Queryable, workspaceId: string, id: string): Promise<KnowledgeBase> {
  const { rows } = await db.query<KnowledgeBaseRow>(
    `SELECT ${columns} FROM knowledge_bases WHERE workspace_id = $1 AND id = $2`,
    [workspaceId, id],
  );
  if (!rows[0]) throw notFound('Knowledge base', id);
  return toKnowledgeBase(rows[0]);
}

export async function updateKnowledgeBase(db: Db, workspaceId: string, id: string, changes: KnowledgeBaseChanges): Promise<KnowledgeBase> {
  return db.transaction(async (tx) => {
    const current = await getKnowledgeBase(tx, workspaceId, id);
    const chunkSize = changes.chunkSize ?? current.chunkSize;
    const chunkOverlap = changes.chunkOverlap ?? current.chunkOverlap;
    assertChunking(chunkSize, chunkOverlap);
    const { rows } = await tx.query<KnowledgeBaseRow>(
      `UPDATE knowledge_bases
       SET name = $3, description = $4, chunk_size = $5, chunk_overlap = $6, updated_at = now()
       WHERE workspace_id = $1 AND id = $2 RETURNING ${columns}`,
      [workspaceId, id, changes.name ?? current.name, changes.description ?? current.description, chunkSize, chunkOverlap],
    );
    return toKnowledgeBase(rows[0]!);
  });
}

/** Deletes a knowledge base with everything in it, and unlinks it from the workspace's experiences. */
export async function deleteKnowledgeBase(db: Db, workspaceId: string, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    const { rowCount } = await tx.query('DELETE FROM knowledge_bases WHERE workspace_id = $1 AND id = $2', [workspaceId, id]);
    if (rowCount === 0) throw notFound('Knowledge base', id);
    await tx.query(
      `UPDATE experiences SET knowledge_base_ids = array_remove(knowledge_base_ids, $2::uuid), updated_at = now()
       WHERE workspace_id = $1 AND $2::uuid = ANY(knowledge_base_ids)`,
      [workspaceId, id],
    );
  });
}
