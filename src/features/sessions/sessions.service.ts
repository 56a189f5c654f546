import type { Queryable } from '../../core/db/db.ts';
import { notFound } from '../../core/errors.ts';
import type { Session } from './sessions.schemas.ts';

type SessionRow = {
  id: string;
  experience_id: string;
  user_id: string | null;
  metadata: Record<string, unknown>;
  status: 'active' | 'completed';
  query_count: number;
  created_at: Date;
  updated_at: Date;
  last_query_at: Date | null;
  completed_at: Date | null;
};

export const sessionColumns = `id, experience_id, user_id, metadata, status, query_count, created_at, updated_at, last_query_at, completed_at`;

export function toSession(row: SessionRow): Session {
  return {
    id: row.id,
    experienceId: row.experience_id,
    userId: row.user_id,
    metadata: row.metadata,
    status: row.status,
    queryCount: row.query_count,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    lastQueryAt: row.last_query_at?.toISOString() ?? null,
    completedAt: row.completed_at?.toISOString() ?? null,
  };
}

export type NewSession = {
  experienceId: string;
  /** Already lower-cased; null for an anonymous session. */
  userId: string | null;
  metadata: Record<string, unknown>;
};

/** Creates a session of an experience the caller has already checked belongs to the workspace. */
export async function createSession(db: Queryable, workspaceId: string, input: NewSession): Promise<Session> {
  const { rows } = await db.query<SessionRow>(
    `INSERT INTO sessions (workspace_id, experience_id, user_id, metadata) VALUES ($1, $2, $3, $4) RETURNING ${sessionColumns}`,
    [workspaceId, input.experienceId, input.userId, JSON.stringify(input.metadata)],
  );
  return toSession(rows[0]!);
}

/** A session of the workspace; 404 otherwise. */
export async function getSession(db: Queryable, workspaceId: string, id: string): Promise<Session> {
  const { rows } = await db.query<SessionRow>(`SELECT ${sessionColumns} FROM sessions WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]);
  if (!rows[0]) throw notFound('Session', id);
  return toSession(rows[0]);
}
