import type { Queryable } from '../../core/db/db.ts';
import type { ChatTurn } from '../../core/providers/generation/provider.ts';
import { contentTerms, words } from '../../core/text/terms.ts';

/** Earlier questions and answers the generator sees: enough for a follow-up, cheap to send. */
const HISTORY_QUERIES = 3;

/** The last queries of a session as user/assistant turns, oldest first. */
export async function recentTurns(db: Queryable, workspaceId: string, sessionId: string): Promise<ChatTurn[]> {
  const { rows } = await db.query<{ text: string; answer: string }>(
    `SELECT text, answer FROM queries WHERE workspace_id = $1 AND session_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3`,
    [workspaceId, sessionId, HISTORY_QUERIES],
  );
  return rows.reverse().flatMap((row): ChatTurn[] => [
    { role: 'user', content: row.text },
    { role: 'assistant', content: row.answer },
  ]);
}

// Words by which a message points back at an earlier one ("and how much does it cost?").
const REFERRING = new Set(['it', 'its', 'this', 'that', 'these', 'those', 'they', 'them', 'their', 'there', 'he', 'she', 'one', 'ones', 'same']);
const CONTINUING = new Set(['and', 'also', 'but', 'or', 'so', 'then', 'what about', 'how about']);
/** A message with fewer topic words than this cannot stand alone as a search. */
const MIN_STANDALONE_TERMS = 2;

/** Whether a message only makes sense with the conversation before it. */
export function isFollowUp(question: string): boolean {
  const tokens = words(question);
  const opening = tokens.slice(0, 2).join(' ');
  if (CONTINUING.has(tokens[0] ?? '') || CONTINUING.has(opening)) return true;
  if (tokens.some((token) => REFERRING.has(token))) return true;
  return contentTerms(question).length < MIN_STANDALONE_TERMS;
}

/**
 * The question retrieval searches for. A follow-up is prefixed with the previous question of the
 * session, so "and how much does it cost?" after "What is the Pro plan?" searches for both; a
 * question that stands alone is searched as asked, so a change of topic is not dragged back.
 */
export function standaloneQuestion(question: string, history: readonly ChatTurn[]): string {
  const previous = history.filter((turn) => turn.role === 'user').at(-1);
  if (!previous || !isFollowUp(question)) return question;
  return `${previous.content} ${question}`;
}
