/**
 * SQuAD's answer measures, as the official evaluate-v2.0.py computes them (normalize_answer,
 * compute_f1), and the parts of an answer of lore's that they are applied to.
 */
import { sentences } from '../../src/core/text/sentences.ts';

// Python's string.punctuation: ASCII only, as the official script strips.
const PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;
// `\b(a|an|the)\b` with Python's Unicode word characters (letters, digits, underscore).
const ARTICLES = /(?<![\p{L}\p{N}_])(?:a|an|the)(?![\p{L}\p{N}_])/gu;
const CITATION = /\[\d+\]/;

/** Lower case, no punctuation, no articles a/an/the, white space folded: the official normalize_answer. */
export function normalizeAnswer(text: string): string {
  return text.toLowerCase().replace(PUNCTUATION, '').replace(ARTICLES, ' ').split(/\s+/).filter(Boolean).join(' ');
}

/** The official token F1 of a prediction against one gold answer. */
export function tokenF1(prediction: string, gold: string): number {
  const predicted = normalizeAnswer(prediction).split(' ').filter(Boolean);
  const expected = normalizeAnswer(gold).split(' ').filter(Boolean);
  if (predicted.length === 0 || expected.length === 0) return predicted.length === expected.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const token of expected) counts.set(token, (counts.get(token) ?? 0) + 1);
  let same = 0;
  for (const token of predicted) {
    const left = counts.get(token) ?? 0;
    if (left > 0) {
      same += 1;
      counts.set(token, left - 1);
    }
  }
  if (same === 0) return 0;
  const precision = same / predicted.length;
  const recall = same / expected.length;
  return (2 * precision * recall) / (precision + recall);
}

/** The best F1 against any of the gold answers, as the official script scores a question. */
export function bestF1(prediction: string, golds: readonly string[]): number {
  return Math.max(0, ...golds.map((gold) => tokenF1(prediction, gold)));
}

/** Whether the normalized text holds a normalized gold answer as whole words. */
export function containsAnswer(text: string, golds: readonly string[]): boolean {
  const haystack = ` ${normalizeAnswer(text)} `;
  return golds.some((gold) => {
    const needle = normalizeAnswer(gold);
    return needle !== '' && haystack.includes(` ${needle} `);
  });
}

/** The answer without its citation marks `[n]`, which are no words of the answer. */
export function withoutCitations(answer: string): string {
  return answer.replace(new RegExp(CITATION.source, 'g'), ' ').replace(/[ \t]+/g, ' ').trim();
}

/** What a reader takes in first: the answer up to its first citation `[n]`, or its first sentence (lore's segmenter) when it cites nothing. */
export function firstSentence(answer: string): string {
  const cited = CITATION.exec(answer);
  if (cited) return answer.slice(0, cited.index).trim();
  return sentences(answer)[0] ?? '';
}

/** Words a reader reads: white-space separated tokens that hold a letter or a digit. */
export function wordCount(text: string): number {
  return text.split(/\s+/).filter((token) => /[\p{L}\p{N}]/u.test(token)).length;
}
