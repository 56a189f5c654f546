import type { Queryable } from '../../core/db/db.ts';
import { notFound } from '../../core/errors.ts';
import { validationError } from '../../core/http/validation-messages.ts';
import { allowedKnowledgeBases, experienceAllowed, type Reach } from '../auth/reach.ts';
import { MAX_METADATA_BYTES, type Message, type Session, type SessionListItem, type SessionListQuery, type SessionTranscript } from './sessions.schemas.ts';

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

/** A session within reach (of the workspace, of an experience of allowed knowledge bases); 404 otherwise. */
async function getSession(db: Queryable, reach: Reach, id: string): Promise<Session> {
  const { rows } = await db.query<SessionRow>(
    `SELECT ${sessionColumns} FROM sessions WHERE workspace_id = $1 AND id = $2 AND ${experienceAllowed('experience_id', 3)}`,
    [reach.workspaceId, id, allowedKnowledgeBases(reach)],
  );
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

// A NULL filter matches every row, so one statement serves every combination of filters. The
// feedback and unanswered filters are EXISTS probes of the session's queries (queries_session).
const listFilter = `s.workspace_id = $1
  AND ($2::uuid IS NULL OR s.experience_id = $2::uuid)
  AND ($3::text IS NULL OR s.user_id = $3::text)
  AND ($4::text IS NULL OR s.status = $4::text)
  AND ($5::text IS NULL OR EXISTS (
    SELECT 1 FROM queries q JOIN query_feedback f ON f.query_id = q.id AND f.workspace_id = $1
    WHERE q.workspace_id = $1 AND q.session_id = s.id AND f.rating = $5::text))
  AND ($6::boolean IS NULL OR EXISTS (
    SELECT 1 FROM queries q WHERE q.workspace_id = $1 AND q.session_id = s.id AND NOT q.grounded) = $6::boolean)
  AND ${experienceAllowed('s.experience_id', 7)}`;

type SessionListRow = SessionRow & { experience_name: string; first_question: string | null };

/** sessionColumns of the list's `s` alias (its statement also reads experiences and queries). */
const listColumns = sessionColumns
  .split(', ')
  .map((column) => `s.${column}`)
  .join(', ');

/**
 * The sessions within reach matching the filters, newest first, each with its experience's name
 * and its first question (a correlated subquery on queries_session: one statement for the page);
 * `userId` is already lower-cased.
 */
export async function listSessions(db: Queryable, reach: Reach, query: SessionListQuery): Promise<{ total: number; sessions: SessionListItem[] }> {
  const filters = [
    reach.workspaceId,
    query.experienceId ?? null,
    query.userId ?? null,
    query.status ?? null,
    query.feedback ?? null,
    query.unanswered ?? null,
    allowedKnowledgeBases(reach),
  ];
  const [{ rows }, count] = await Promise.all([
    db.query<SessionListRow>(
      `SELECT ${listColumns}, e.name AS experience_name,
              (SELECT q.text FROM queries q WHERE q.workspace_id = $1 AND q.session_id = s.id ORDER BY q.created_at, q.id LIMIT 1) AS first_question
       FROM sessions s JOIN experiences e ON e.id = s.experience_id AND e.workspace_id = $1
       WHERE ${listFilter} ORDER BY s.created_at DESC, s.id LIMIT $8 OFFSET $9`,
      [...filters, query.limit, query.offset],
    ),
    db.query<{ total: number }>(`SELECT count(*)::int AS total FROM sessions s WHERE ${listFilter}`, filters),
  ]);
  return {
    total: count.rows[0]!.total,
    sessions: rows.map((row) => ({ ...toSession(row), experienceName: row.experience_name, firstQuestion: row.first_question })),
  };
}

type MessageRow = {
  id: string;
  text: string;
  answer: string;
  format: string;
  sources: Message['sources'];
  actions: Message['actions'];
  tool_calls: Message['toolCalls'];
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
    toolCalls: row.tool_calls,
    metadata: row.metadata,
    grounded: row.grounded,
    latencyMs: row.latency_ms,
    askedAt: row.asked_at.toISOString(),
    createdAt: row.created_at.toISOString(),
    feedback: row.rating && row.rated_at ? { rating: row.rating, comment: row.comment, createdAt: row.rated_at.toISOString() } : null,
  };
}

/** A session within reach with its answered queries, oldest first, each with its feedback. */
export async function getTranscript(db: Queryable, reach: Reach, id: string): Promise<SessionTranscript> {
  const { workspaceId } = reach;
  const session = await getSession(db, reach, id);
  // A second rating replaces the first (query_feedback's primary key is the query), so the
  // current rating was given at updated_at.
  const { rows } = await db.query<MessageRow>(
    `SELECT q.id, q.text, q.answer, q.format, q.sources, q.actions, q.tool_calls, q.metadata, q.grounded, q.latency_ms,
            q.asked_at, q.created_at, f.rating, f.comment, f.updated_at AS rated_at
     FROM queries q
     LEFT JOIN query_feedback f ON f.query_id = q.id AND f.workspace_id = $1
     WHERE q.workspace_id = $1 AND q.session_id = $2
     ORDER BY q.created_at, q.id`,
    [workspaceId, id],
  );
  return { ...session, messages: rows.map(toMessage) };
}

/** Replaces a session's metadata; 404 when the session is not within reach. */
export async function replaceSessionMetadata(db: Queryable, reach: Reach, id: string, metadata: Record<string, unknown>): Promise<Session> {
  const { rows } = await db.query<SessionRow>(
    `UPDATE sessions SET metadata = $4, updated_at = now()
     WHERE workspace_id = $1 AND id = $2 AND ${experienceAllowed('experience_id', 3)} RETURNING ${sessionColumns}`,
    [reach.workspaceId, id, allowedKnowledgeBases(reach), JSON.stringify(metadata)],
  );
  if (!rows[0]) throw notFound('Session', id);
  return toSession(rows[0]);
}

/**
 * Marks a session completed. Completing it again answers the session unchanged (its first
 * completedAt), so a client may retry or send it from several tabs.
 */
export async function completeSession(db: Queryable, reach: Reach, id: string): Promise<Session> {
  const { rows } = await db.query<SessionRow>(
    `UPDATE sessions SET status = 'completed', completed_at = now(), updated_at = now()
     WHERE workspace_id = $1 AND id = $2 AND ${experienceAllowed('experience_id', 3)} AND status = 'active' RETURNING ${sessionColumns}`,
    [reach.workspaceId, id, allowedKnowledgeBases(reach)],
  );
  return rows[0] ? toSession(rows[0]) : getSession(db, reach, id);
}
