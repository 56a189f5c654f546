import { stemmer } from 'stemmer';
import { eng } from 'stopword';

const STOPWORDS = new Set(eng);
// Question words and chat filler carry no topic; the stopword list keeps some of them.
for (const word of ['please', 'tell', 'know', 'want', 'need', 'can', 'could', 'would', 'should', 'does', 'do', 'did', 'get', 'hi', 'hello', 'thanks']) {
  STOPWORDS.add(word);
}

const WORD = /[\p{L}\p{N}][\p{L}\p{N}'’]*/gu;
const APOSTROPHE = /['’]/;

/** The lower-cased words of a text, in order. */
export function words(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []).map((word) => (APOSTROPHE.test(word) ? word.replace(/['’]s$/, '').replace(/['’]/g, '') : word));
}

// Stems of the words seen, since a question's sources are stemmed sentence by sentence at every
// question and their words repeat: the stemmer was 0.2 ms of a question's CPU at 100,000 chunks
// (a CPU profile of bench:query-statements). Cleared when full, a few MB at most.
const stems = new Map<string, string>();
const STEMS_KEPT = 50_000;

function stem(word: string): string {
  let found = stems.get(word);
  if (found === undefined) {
    if (stems.size >= STEMS_KEPT) stems.clear();
    found = stemmer(word);
    stems.set(word, found);
  }
  return found;
}

/** The Porter stems of the topic words of a text (stopwords and one-letter words dropped), in order. */
export function contentTerms(text: string): string[] {
  return words(text)
    .filter((word) => word.length > 1 && !STOPWORDS.has(word))
    .map(stem);
}

/** Distinct content terms of a text. */
export function termSet(text: string): Set<string> {
  return new Set(contentTerms(text));
}

/**
 * How much two sets say the same: the share of the smaller one the other holds (0 when either is
 * empty), so that a short text repeated inside a long one counts as a repeat.
 */
export function overlapShare(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const item of a) if (b.has(item)) shared += 1;
  return shared / Math.min(a.size, b.size);
}

/** Share of `question`'s terms that `terms` contain (0 when the question has none). */
export function coverage(question: ReadonlySet<string>, terms: ReadonlySet<string>): number {
  if (question.size === 0) return 0;
  let found = 0;
  for (const term of question) if (terms.has(term)) found += 1;
  return found / question.size;
}
