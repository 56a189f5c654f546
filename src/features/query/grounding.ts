import type { GroundingSource } from '../../core/providers/generation/provider.ts';
import { coverage, termSet } from '../../core/text/terms.ts';
import type { RetrievedChunk } from '../retrieval/retrieve.service.ts';
import type { Source } from './query.schemas.ts';

/** Default minimum relevance of a chunk (experience setting `minScore`). */
export const DEFAULT_MIN_SCORE = 0.5;
/** Default number of sources an answer draws on (experience setting `topK`). */
export const DEFAULT_TOP_K = 5;
/** Chunks of one entry an answer may quote: its best two, so one long entry cannot crowd out others. */
const CHUNKS_PER_ENTRY = 2;
const SNIPPET_LENGTH = 240;

export type Grounding = {
  /** Relevant entries, best first, numbered from 1: what the generator may cite. */
  sources: GroundingSource[];
  /** Relevant entries beyond the first `topK`, best first (follow-up suggestions). */
  related: { entryId: string; title: string }[];
};

/**
 * A chunk's relevance to the question, from 0 to 1: the larger of its cosine similarity and the
 * share of the question's terms it contains (title included). The fused rank says which chunk is
 * better, not whether any is good enough; these two are absolute, and either one alone can find
 * an answer the other misses (a paraphrase, or a product name the encoder does not know).
 */
export function relevance(chunk: RetrievedChunk, questionTerms: ReadonlySet<string>): number {
  const lexical = coverage(questionTerms, termSet(`${chunk.title} ${chunk.text}`));
  return Math.max(chunk.vectorScore ?? 0, lexical);
}

/**
 * Turns ranked chunks into the answer's sources: chunks below `minScore` are dropped, the rest are
 * grouped per entry in rank order (so an entry is cited once), and the first `topK` entries are
 * numbered.
 */
export function groundingOf(chunks: readonly RetrievedChunk[], question: string, options: { topK: number; minScore: number }): Grounding {
  const questionTerms = termSet(question);
  const entries = new Map<string, { chunks: RetrievedChunk[]; score: number }>();
  const related = new Map<string, { entryId: string; title: string }>();
  for (const chunk of chunks) {
    const score = relevance(chunk, questionTerms);
    const entry = entries.get(chunk.entryId);
    if (score < options.minScore) continue;
    if (!entry && entries.size < options.topK) entries.set(chunk.entryId, { chunks: [chunk], score });
    else if (entry && entry.chunks.length < CHUNKS_PER_ENTRY) entry.chunks.push(chunk);
    else if (!entry) related.set(chunk.entryId, { entryId: chunk.entryId, title: chunk.title });
  }
  const sources = [...entries.values()].map(({ chunks: [best, ...more], score }, index) => ({
    number: index + 1,
    entryId: best!.entryId,
    title: best!.title,
    url: best!.url,
    text: [best!, ...more].sort((a, b) => a.ordinal - b.ordinal).map((chunk) => chunk.text).join('\n\n'),
    score,
  }));
  for (const source of sources) related.delete(source.entryId);
  return { sources, related: [...related.values()] };
}

/** The numbers an answer cites as `[n]`. */
export function citedNumbers(answer: string): Set<number> {
  return new Set([...answer.matchAll(/\[(\d{1,3})\]/g)].map((match) => Number(match[1])));
}

/** A source as the response shows it: a short snippet instead of the whole text. */
export function publicSource(source: GroundingSource): Source {
  const text = source.text.replace(/\s+/g, ' ').trim();
  return {
    number: source.number,
    entryId: source.entryId,
    title: source.title,
    url: source.url,
    snippet: text.length <= SNIPPET_LENGTH ? text : `${text.slice(0, SNIPPET_LENGTH - 1)}…`,
    score: Math.round(source.score * 1000) / 1000,
  };
}
