import type { Db, Queryable } from '../../core/db/db.ts';
import { AppError, notFound } from '../../core/errors.ts';
import type { Action } from '../experiences/action.schema.ts';
import type { Session } from '../sessions/sessions.schemas.ts';
import { getSession } from '../sessions/sessions.service.ts';
import type { Source } from './query.schemas.ts';

/**
 * The session a query continues. It must be of this experience (404 otherwise, as if it did not
 * exist), have been created with the same userId (403; an anonymous session matches only anonymous
 * queries) and still be active (409).
 */
export async function continuedSession(
  db: Queryable,
  input: { workspaceId: string; experienceId: string; sessionId: string; userId: string | null },
): Promise<Session> {
  const session = await getSession(db, input.workspaceId, input.sessionId);
  if (session.experienceId !== input.experienceId) throw notFound('Session', input.sessionId);
  if (session.userId !== input.userId) {
    throw new AppError('FORBIDDEN', `Session ${session.id} belongs to another userId than the request's.`);
  }
  if (session.status === 'completed') throw new AppError('CONFLICT', `Session ${session.id} is completed and takes no new queries.`);
  return session;
}

export type AnsweredQuery = {
  id: string;
  workspaceId: string;
  sessionId: string;
  experienceId: string;
  userId: string | null;
  text: string;
  standaloneText: string;
  answer: string;
  sources: Source[];
  actions: Action[];
  metadata: Record<string, unknown>;
  grounded: boolean;
  generator: string;
  model: string;
  latencyMs: number;
  timings: Record<string, number>;
  askedAt: string;
  answeredAt: string;
};

/** Stores an answered query with its session's counters, in one transaction. */
export async function recordQuery(db: Db, query: AnsweredQuery): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO queries (id, workspace_id, session_id, experience_id, user_id, text, standalone_text, answer, sources, actions,
         metadata, grounded, generator, model, latency_ms, timings, asked_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
      [
        query.id,
        query.workspaceId,
        query.sessionId,
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
      ],
    );
    await tx.query(
      `UPDATE sessions SET query_count = query_count + 1, last_query_at = $3, updated_at = $3 WHERE workspace_id = $1 AND id = $2`,
      [query.workspaceId, query.sessionId, query.answeredAt],
    );
  });
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
