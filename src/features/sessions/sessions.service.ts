import type { Queryable } from '../../core/db/db.ts';
import { notFound } from '../../core/errors.ts';
import { validationError } from '../../core/http/validation-messages.ts';
import { MAX_METADATA_BYTES, type Message, type Session, type SessionListQuery, type SessionTranscript } from './sessions.schemas.ts';

export type SessionRow = {
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

/** Throws the 400 for a metadata object above MAX_METADATA_BYTES once serialized. */
export function assertMetadataSize(metadata: Record<string, unknown>, pointer = '/metadata'): void {
  const bytes = Buffer.byteLength(JSON.stringify(metadata));
  if (bytes > MAX_METADATA_BYTES) {
    throw validationError([{ path: pointer, message: `must have at most ${MAX_METADATA_BYTES} bytes as JSON (has ${bytes})` }]);
  }
}

// A NULL filter matches every row, so one statement serves every combination of filters.
const listFilter = `workspace_id = $1
  AND ($2::uuid IS NULL OR experience_id = $2::uuid)
  AND ($3::text IS NULL OR user_id = $3::text)
  AND ($4::text IS NULL OR status = $4::text)`;

/** The workspace's sessions matching the filters, newest first; `userId` is already lower-cased. */
export async function listSessions(db: Queryable, workspaceId: string, query: SessionListQuery): Promise<{ total: number; sessions: Session[] }> {
  const filters = [workspaceId, query.experienceId ?? null, query.userId ?? null, query.status ?? null];
  const [{ rows }, count] = await Promise.all([
    db.query<SessionRow>(
      `SELECT ${sessionColumns} FROM sessions WHERE ${listFilter} ORDER BY created_at DESC, id LIMIT $5 OFFSET $6`,
      [...filters, query.limit, query.offset],
    ),
    db.query<{ total: number }>(`SELECT count(*)::int AS total FROM sessions WHERE ${listFilter}`, filters),
  ]);
  return { total: count.rows[0]!.total, sessions: rows.map(toSession) };
}

type MessageRow = {
  id: string;
  text: string;
  answer: string;
  format: string;
  sources: Message['sources'];
  actions: Message['actions'];
  metadata: Record<string, unknown>;
  grounded: boolean;
  latency_ms: number;
  asked_at: Date;
  created_at: Date;
  rating: 'up' | 'down' | null;
  comment: string | null;
  rated_at: Date | null;
};

function toMessage(row: MessageRow): Message {
  return {
    queryId: row.id,
    text: row.text,
    answer: row.answer,
    format: row.format,
    sources: row.sources,
    actions: row.actions,
    metadata: row.metadata,
    grounded: row.grounded,
    latencyMs: row.latency_ms,
    askedAt: row.asked_at.toISOString(),
    createdAt: row.created_at.toISOString(),
    feedback: row.rating && row.rated_at ? { rating: row.rating, comment: row.comment, createdAt: row.rated_at.toISOString() } : null,
  };
}

/** A session of the workspace with its answered queries, oldest first, each with its feedback. */
export async function getTranscript(db: Queryable, workspaceId: string, id: string): Promise<SessionTranscript> {
  const session = await getSession(db, workspaceId, id);
  // A second rating replaces the first (query_feedback's primary key is the query), so the
  // current rating was given at updated_at.
  const { rows } = await db.query<MessageRow>(
    `SELECT q.id, q.text, q.answer, q.format, q.sources, q.actions, q.metadata, q.grounded, q.latency_ms,
            q.asked_at, q.created_at, f.rating, f.comment, f.updated_at AS rated_at
     FROM queries q
     LEFT JOIN query_feedback f ON f.query_id = q.id AND f.workspace_id = $1
     WHERE q.workspace_id = $1 AND q.session_id = $2
     ORDER BY q.created_at, q.id`,
    [workspaceId, id],
  );
  return { ...session, messages: rows.map(toMessage) };
}

/** Replaces a session's metadata; 404 when the session is not the workspace's. */
export async function replaceSessionMetadata(db: Queryable, workspaceId: string, id: string, metadata: Record<string, unknown>): Promise<Session> {
  const { rows } = await db.query<SessionRow>(
    `UPDATE sessions SET metadata = $3, updated_at = now() WHERE workspace_id = $1 AND id = $2 RETURNING ${sessionColumns}`,
    [workspaceId, id, JSON.stringify(metadata)],
  );
  if (!rows[0]) throw notFound('Session', id);
  return toSession(rows[0]);
}

/**
 * Marks a session completed. Completing it again answers the session unchanged (its first
 * completedAt), so a client may retry or send it from several tabs.
 */
export async function completeSession(db: Queryable, workspaceId: string, id: string): Promise<Session> {
  const { rows } = await db.query<SessionRow>(
    `UPDATE sessions SET status = 'completed', completed_at = now(), updated_at = now()
     WHERE workspace_id = $1 AND id = $2 AND status = 'active' RETURNING ${sessionColumns}`,
    [workspaceId, id],
  );
  return rows[0] ? toSession(rows[0]) : getSession(db, workspaceId, id);
}
