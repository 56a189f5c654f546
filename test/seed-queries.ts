/** Answered queries written straight into a test server's database, at chosen times, for the tests of what is computed from them. */
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../src/core/db/db.ts';
import { newSession, rateQuery, recordQuery } from '../src/features/query/query.service.ts';

export type SeededQuery = {
  text: string;
  /** False: answered by the experience's fallback message. */
  grounded: boolean;
  /** When lore answered (ISO); the day it counts on. */
  at: string;
  latencyMs?: number;
  rating?: 'up' | 'down';
};

/**
 * One session of an experience holding `queries` in order (the session starts at the first one's
 * time); answers the session id and the query ids.
 */
export async function seedSession(
  db: Queryable,
  workspaceId: string,
  experienceId: string,
  queries: SeededQuery[],
  userId: string | null = null,
): Promise<{ sessionId: string; queryIds: string[] }> {
  const session = { ...newSession({ experienceId, userId, metadata: {} }), createdAt: queries[0]?.at ?? new Date().toISOString() };
  const queryIds: string[] = [];
  for (const query of queries) {
    const id = randomUUID();
    await recordQuery(db, session, {
      id,
      workspaceId,
      experienceId,
      userId,
      text: query.text,
      standaloneText: query.text,
      answer: query.grounded ? `An answer to: ${query.text}` : 'Sorry, I do not know.',
      sources: [],
      actions: [],
      toolCalls: [],
      metadata: {},
      grounded: query.grounded,
      generator: 'extractive',
      model: 'test',
      latencyMs: query.latencyMs ?? 100,
      timings: {},
      askedAt: query.at,
      answeredAt: query.at,
    });
    if (query.rating) await rateQuery(db, workspaceId, id, query.rating, undefined);
    queryIds.push(id);
  }
  return { sessionId: session.id, queryIds };
}
