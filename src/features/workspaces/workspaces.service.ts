import type { Db } from '../../core/db/db.ts';
import { notFound } from '../../core/errors.ts';

export type WorkspaceStatus = 'active' | 'suspended';

export type Workspace = { id: string; name: string; status: WorkspaceStatus; createdAt: string; updatedAt: string };

type WorkspaceRow = { id: string; name: string; status: WorkspaceStatus; created_at: Date; updated_at: Date };

const columns = 'id, name, status, created_at, updated_at';

function toWorkspace(row: WorkspaceRow): Workspace {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export async function createWorkspace(db: Db, name: string): Promise<Workspace> {
  const { rows } = await db.query<WorkspaceRow>(`INSERT INTO workspaces (name) VALUES ($1) RETURNING ${columns}`, [name]);
  return toWorkspace(rows[0]!);
}

export async function listWorkspaces(db: Db, page: { limit: number; offset: number }): Promise<{ total: number; workspaces: Workspace[] }> {
  const [{ rows }, count] = await Promise.all([
    db.query<WorkspaceRow>(`SELECT ${columns} FROM workspaces ORDER BY created_at DESC, id LIMIT $1 OFFSET $2`, [page.limit, page.offset]),
    db.query<{ total: number }>('SELECT count(*)::int AS total FROM workspaces'),
  ]);
  return { total: count.rows[0]!.total, workspaces: rows.map(toWorkspace) };
}

export async function getWorkspace(db: Db, id: string): Promise<Workspace> {
  const { rows } = await db.query<WorkspaceRow>(`SELECT ${columns} FROM workspaces WHERE id = $1`, [id]);
  if (!rows[0]) throw notFound('Workspace', id);
  return toWorkspace(rows[0]);
}

export async function updateWorkspace(db: Db, id: string, changes: { name?: string; status?: WorkspaceStatus }): Promise<Workspace> {
  const { rows } = await db.query<WorkspaceRow>(
    `UPDATE workspaces SET name = COALESCE($2, name), status = COALESCE($3, status), updated_at = now()
     WHERE id = $1 RETURNING ${columns}`,
    [id, changes.name ?? null, changes.status ?? null],
  );
  if (!rows[0]) throw notFound('Workspace', id);
  return toWorkspace(rows[0]);
}
