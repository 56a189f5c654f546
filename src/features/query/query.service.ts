import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../core/db/db.ts';
import { AppError, notFound } from '../../core/errors.ts';
import type { Action } from '../experiences/action.schema.ts';
import type { ToolCall } from '../tools/tool.schema.ts';
import type { Session } from '../sessions/sessions.schemas.ts';
import type { Source } from './query.schemas.ts';

/**
 * The session a query continues, as `queryContext` read it. It must be of this experience (404
 * otherwise, as if it did not exist), have been created with the same userId (403; an anonymous
 * session matches only anonymous queries) and still be active (409).
 */
export function continuedSession(
  session: Session | null,
  input: { experienceId: string; sessionId: string; userId: string | null },
): Session {
  if (!session || session.experienceId !== input.experienceId) throw notFound('Session', input.sessionId);
  if (session.userId !== input.userId) {
    throw new AppError('FORBIDDEN', `Session ${session.id} belongs to another userId than the request's.`);
  }
  if (session.status === 'completed') throw new AppError('CONFLICT', `Session ${session.id} is completed and takes no new queries.`);
  return session;
}

/**
 * A new session for a query that names none. It is stored with the query's answer (`recordQuery`),
 * or on its own when a stream that already announced it fails (`storeSession`), so that a query
 * refused or failed before it answers leaves no empty session.
 */
export function newSession(input: { experienceId: string; userId: string | null; metadata: Record<string, unknown> }): Session {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    experienceId: input.experienceId,
    userId: input.userId,
    metadata: input.metadata,
    status: 'active',
    queryCount: 0,
    createdAt: now,
    updatedAt: now,
    lastQueryAt: null,
    completedAt: null,
  };
}

/** Stores a new session that no answer will store (see `newSession`); nothing if it exists. */
export async function storeSession(db: Queryable, workspaceId: string, session: Session): Promise<void> {
  await db.query(
    `INSERT INTO sessions (workspace_id, id, experience_id, user_id, metadata, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (id) DO NOTHING`,
    [
      workspaceId,
      session.id,
      session.experienceId,
      session.userId,
      JSON.stringify(session.metadata),
      session.createdAt,
    ],
  );
}

export type AnsweredQuery = {
  id: string;
  workspaceId: string;
  experienceId: string;
  userId: string | null;
  text: string;
  standaloneText: string;
  answer: string;
  sources: Source[];
  actions: Action[];
  toolCalls: ToolCall[];
  metadata: Record<string, unknown>;
  grounded: boolean;
  generator: string;
  model: string;
  latencyMs: number;
  timings: Record<string, number>;
  askedAt: string;
  answeredAt: string;
};

/**
 * Stores an answered query and counts it in its session, which is created here when the query
 * started it: one statement (the session's upsert and the query's insert), where there were a
 * session insert and a transaction of two more.
 */
export async function recordQuery(db: Queryable, session: Session, query: AnsweredQuery): Promise<void> {
  await db.query(
    `WITH session AS (
       INSERT INTO sessions (workspace_id, id, experience_id, user_id, metadata, created_at, updated_at, query_count, last_query_at)
       VALUES ($1, $2, $3, $4, $5, $6, $22, 1, $22)
       ON CONFLICT (id) DO UPDATE SET query_count = sessions.query_count + 1, last_query_at = EXCLUDED.last_query_at, updated_at = EXCLUDED.updated_at
       WHERE sessions.workspace_id = EXCLUDED.workspace_id
     )
     INSERT INTO queries (id, workspace_id, session_id, experience_id, user_id, text, standalone_text, answer, sources, actions,
       metadata, grounded, generator, model, latency_ms, timings, asked_at, created_at, tool_calls)
     VALUES ($7, $1, $2, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)`,
    [
      query.workspaceId,
      session.id,
      session.experienceId,
      session.userId,
      JSON.stringify(session.metadata),
      session.createdAt,
      query.id,
      query.experienceId,
      query.userId,
      query.text,
      query.standaloneText,
      query.answer,
      JSON.stringify(query.sources),
      JSON.stringify(query.actions),
      JSON.stringify(query.metadata),
      query.grounded,
      query.generator,
      query.model,
      query.latencyMs,
      JSON.stringify(query.timings),
      query.askedAt,
      query.answeredAt,
      JSON.stringify(query.toolCalls),
    ],
    { prepare: true, question: true },
  );
}

/** The experience a query was asked of, by the query's id alone (the feedback route's entry point). */
export async function queryExperience(db: Queryable, queryId: string): Promise<{ workspaceId: string; experienceId: string }> {
  const { rows } = await db.query<{ workspace_id: string; experience_id: string }>('SELECT workspace_id, experience_id FROM queries WHERE id = $1', [
    queryId,
  ]);
  if (!rows[0]) throw notFound('Query', queryId);
  return { workspaceId: rows[0].workspace_id, experienceId: rows[0].experience_id };
}

/** Records a rating of an answer; a later rating of the same answer replaces the earlier one. */
export async function rateQuery(db: Queryable, workspaceId: string, queryId: string, rating: 'up' | 'down', comment: string | undefined): Promise<void> {
  await db.query(
    `INSERT INTO query_feedback (query_id, workspace_id, rating, comment) VALUES ($1, $2, $3, $4)
     ON CONFLICT (query_id) DO UPDATE SET rating = EXCLUDED.rating, comment = EXCLUDED.comment, updated_at = now()
     WHERE query_feedback.workspace_id = EXCLUDED.workspace_id`,
    [queryId, workspaceId, rating, comment ?? null],
  );
}
