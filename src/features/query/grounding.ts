import type { GroundingSource } from '../../core/providers/generation/provider.ts';
import { overlapShare } from '../../core/text/terms.ts';
import type { RetrievedChunk } from '../retrieval/retrieve.service.ts';
import type { Source } from './query.schemas.ts';

/**
 * Default minimum relevance (experience setting `minScore`): a question is answered when one of
 * its best chunks holds at least this share of the question's keyword weight, or is as close in
 * meaning as the encoder's `relevantCosine`. On bench:answers dev (bench/history.md, "Answers on real documentation"),
 * 0.34 answered every answerable question but three and no off-topic one.
 */
export const DEFAULT_MIN_SCORE = 0.34;
/** Default number of sources an answer draws on (experience setting `topK`). */
export const DEFAULT_TOP_K = 5;
/** Chunks of one entry an answer may quote: its best two, so one long entry cannot crowd out others. */
const CHUNKS_PER_ENTRY = 2;
/** The chunks whose relevance decides whether the question is answerable at all. */
const DECIDING_CHUNKS = 5;
/**
 * Once a question is answerable, a chunk is kept at half the threshold: the ranking already says
 * which chunks are best, and a paraphrased question's best chunk often shares few of its words.
 */
const KEEP_SHARE = 0.5;
/** Two sources sharing this share of their word pairs say the same thing (a page repeated in several places). */
const DUPLICATE_SIMILARITY = 0.6;
const SNIPPET_LENGTH = 240;

export type Grounding = {
  /** Relevant entries, best first, numbered from 1: what the generator may cite. */
  sources: GroundingSource[];
  /** Relevant entries beyond the first `topK`, best first (follow-up suggestions). */
  related: { entryId: string; title: string }[];
};

export type GroundingOptions = {
  topK: number;
  minScore: number;
  /** The cosine similarity at which the encoder in use counts a chunk as relevant (its `relevantCosine`). */
  relevantCosine: number;
};

/**
 * A chunk's relevance to the question, 0 to 1: the larger of its keyword coverage (the share of
 * the question's idf weight it holds) and its cosine similarity, scaled so that the encoder's
 * `relevantCosine` counts as much as DEFAULT_MIN_SCORE of coverage. Either one alone can find an
 * answer the other misses: a paraphrase, or a product name the encoder does not know.
 */
export function relevance(chunk: RetrievedChunk, relevantCosine: number): number {
  const meaning = chunk.vectorScore === null ? 0 : Math.min(1, (chunk.vectorScore * DEFAULT_MIN_SCORE) / relevantCosine);
  return Math.max(chunk.keywordCoverage, meaning);
}

/** Word pairs of a text, for near-duplicate detection. */
function wordPairs(text: string): Set<string> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  const pairs = new Set<string>();
  for (let index = 1; index < words.length; index += 1) pairs.add(`${words[index - 1]} ${words[index]}`);
  return pairs;
}

/**
 * The text of an entry's chunks in document order. Neighbouring chunks of a section overlap (by
 * the knowledge base's chunkOverlap): the repeated start of a chunk is cut, so that no sentence
 * stands twice in a row.
 */
export function mergedText(chunks: readonly RetrievedChunk[]): Pick<GroundingSource, 'text' | 'sections'> {
  const ordered = [...chunks].sort((a, b) => a.start - b.start);
  const parts: string[] = [];
  const sections: NonNullable<GroundingSource['sections']> = [];
  let length = 0;
  let end = -1;
  for (const chunk of ordered) {
    if (chunk.start < end) {
      const rest = chunk.text.slice(end - chunk.start);
      if (rest.trim()) parts[parts.length - 1] += rest;
      length += rest.length;
    } else {
      if (parts.length > 0) length += 2;
      sections.push({ start: length, headingPath: chunk.headingPath });
      parts.push(chunk.text);
      length += chunk.text.length;
    }
    end = Math.max(end, chunk.end);
  }
  return { text: parts.join('\n\n'), sections };
}

/**
 * Turns ranked chunks into the answer's sources. The question is answerable when one of its
 * DECIDING_CHUNKS best chunks reaches `minScore`; then every chunk reaching KEEP_SHARE of it is
 * kept, grouped per entry in rank order (an entry is cited once, with its best chunks), and an
 * entry that repeats an earlier one nearly word for word is left out. A source's score is the
 * retrieval score of its best chunk, so sources are in score order.
 */
export function groundingOf(chunks: readonly RetrievedChunk[], options: GroundingOptions): Grounding {
  const scored = chunks.map((chunk) => ({ chunk, relevance: relevance(chunk, options.relevantCosine) }));
  const answerable = scored.slice(0, DECIDING_CHUNKS).some((item) => item.relevance >= options.minScore);
  if (!answerable) return { sources: [], related: [] };
  const entries = new Map<string, { chunks: RetrievedChunk[]; score: number }>();
  const related = new Map<string, { entryId: string; title: string }>();
  for (const { chunk, relevance: value } of scored) {
    if (value < options.minScore * KEEP_SHARE) continue;
    const entry = entries.get(chunk.entryId);
    if (entry) {
      if (entry.chunks.length < CHUNKS_PER_ENTRY) entry.chunks.push(chunk);
    } else {
      entries.set(chunk.entryId, { chunks: [chunk], score: chunk.score });
    }
  }
  const sources: GroundingSource[] = [];
  const seen: Set<string>[] = [];
  for (const { chunks: entryChunks, score } of entries.values()) {
    const best = entryChunks[0]!;
    const { text, sections } = mergedText(entryChunks);
    const pairs = wordPairs(text);
    if (sources.length >= options.topK || seen.some((other) => overlapShare(pairs, other) >= DUPLICATE_SIMILARITY)) {
      related.set(best.entryId, { entryId: best.entryId, title: best.title });
      continue;
    }
    seen.push(pairs);
    sources.push({
      number: sources.length + 1,
      entryId: best.entryId,
      title: best.title,
      url: best.url,
      text,
      score,
      sections,
      ...(typeof best.page === 'number' ? { page: best.page } : {}),
    });
  }
  return { sources, related: [...related.values()] };
}

/** The numbers an answer cites as `[n]`. */
export function citedNumbers(answer: string): Set<number> {
  return new Set([...answer.matchAll(/\[(\d{1,3})\]/g)].map((match) => Number(match[1])));
}

/**
 * A source as the response shows it: a short snippet instead of the whole text. A source from a
 * paged document (PDF) cites its page: in `metadata.page`, and in the URL as the fragment PDF
 * viewers open at (`#page=N`, RFC 8118) when the document has a URL without a fragment already.
 */
export function publicSource(source: GroundingSource): Source {
  const text = source.text.replace(/\s+/g, ' ').trim();
  const { page } = source;
  return {
    number: source.number,
    entryId: source.entryId,
    title: source.title,
    url: page !== undefined && source.url !== null && !source.url.includes('#') ? `${source.url}#page=${page}` : source.url,
    snippet: text.length <= SNIPPET_LENGTH ? text : `${text.slice(0, SNIPPET_LENGTH - 1)}…`,
    score: Math.round(source.score * 1000) / 1000,
    ...(page === undefined ? {} : { metadata: { page } }),
  };
}
