/** How an answer of `bench:answers` is judged: the same strict reading a user would give it. */
import type { Turn } from './questions.ts';

/**
 * Whether `answer` states every fact. A fact is a set of alternatives ("64|sixty-four"), matched
 * as a case-insensitive substring after folding white space. Markdown is not cleaned up first: an
 * answer that writes `some\_command` has not told the user `some_command`.
 */
export function statesFacts(answer: string, facts: readonly string[]): boolean {
  const text = answer.toLowerCase().replace(/\s+/g, ' ');
  return facts.every((fact) => fact.split('|').some((alternative) => text.includes(alternative.toLowerCase().replace(/\s+/g, ' '))));
}

/** The page id of a source's URL (`https://docs.python.org/3.11/library/os.html#x` → `library/os.html`). */
export function pageOfUrl(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  const match = /^https:\/\/docs\.python\.org\/3\.11\/([^#?]+)/.exec(url);
  return match?.[1];
}

/** Whether one of the turn's pages is among `pages`. */
export function hitsPage(turn: Turn, pages: readonly (string | undefined)[]): boolean {
  return pages.some((page) => page !== undefined && turn.pages.includes(page));
}

/** 1 / rank of the first expected page within the first `depth` distinct pages of a ranking, else 0. */
export function reciprocalRank(turn: Turn, ranking: readonly string[], depth: number): number {
  const index = ranking.slice(0, depth).findIndex((page) => turn.pages.includes(page));
  return index < 0 ? 0 : 1 / (index + 1);
}
