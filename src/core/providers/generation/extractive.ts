import { splitSentences } from '../../../features/ingestion/chunking/text-boundaries.ts';
import { contentTerms } from '../../text/terms.ts';
import type { AnswerGenerator, GenerationRequest, GroundingSource } from './provider.ts';

// A sentence scoring below this share of the best one adds words more than answer.
const RELATIVE_CUTOFF = 0.6;

/** A sentence of a source, with what scoring needs; `code` is the code block a "...:" sentence introduces. */
type Candidate = { source: GroundingSource; position: number; text: string; code?: string; terms: Set<string>; score: number };

export type ExtractiveOptions = {
  /** Longest answer in characters, citations and code excluded (default 700). */
  maxCharacters?: number;
  /** Most sentences in an answer (default 4). */
  maxSentences?: number;
};

// Markdown that reads badly inside a sentence of an answer: list bullets, quote marks, table pipes.
const LINE_MARKUP = /^\s{0,3}(?:[-*+]\s+|\d{1,3}[.)]\s+|>\s?|\|)/;
const LIST_ITEM = /^\s{0,3}(?:[-*+]|\d{1,3}[.)])\s+/;

/** Blank-line separated blocks of a text; a fenced code block is one block even with blank lines. */
function blocksOf(text: string): { code: boolean; lines: string[] }[] {
  const blocks: { code: boolean; lines: string[] }[] = [];
  let current: { code: boolean; lines: string[] } | undefined;
  let fence = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) {
      if (!fence) blocks.push((current = { code: true, lines: [] }));
      else current = undefined;
      fence = !fence;
      continue;
    }
    if (fence) {
      current!.lines.push(line);
    } else if (line.trim() === '') {
      current = undefined;
    } else {
      const code = /^( {4}|\t)/.test(line);
      if (!current || current.code !== code) blocks.push((current = { code, lines: [] }));
      current.lines.push(code ? line.replace(/^( {4}|\t)/, '') : line);
    }
  }
  return blocks;
}

/**
 * The sentences of a source: wrapped lines of a paragraph are joined, list items stand alone,
 * headings and table rules are left out, and a code block stays with the sentence that introduces
 * it ("You can build it with:").
 */
function sentencesOf(source: GroundingSource): { position: number; text: string; code?: string }[] {
  const result: { position: number; text: string; code?: string }[] = [];
  for (const block of blocksOf(source.text)) {
    const previous = result.at(-1);
    if (block.code) {
      if (previous?.text.endsWith(':') && previous.code === undefined) previous.code = block.lines.join('\n');
      continue;
    }
    const paragraphs: string[] = [];
    for (const line of block.lines) {
      if (/^\s{0,3}#{1,6}\s/.test(line) || /^\s*\|?\s*:?-{3,}/.test(line)) continue;
      const text = line.replace(LINE_MARKUP, '').replace(/\s*\|\s*/g, ' ').trim();
      if (paragraphs.length === 0 || LIST_ITEM.test(line)) paragraphs.push(text);
      else paragraphs[paragraphs.length - 1] += ` ${text}`;
    }
    for (const paragraph of paragraphs) {
      for (const range of splitSentences(paragraph, 0, paragraph.length)) {
        const text = paragraph.slice(range.start, range.end).trim();
        if (text.length >= 12) result.push({ position: result.length, text });
      }
    }
  }
  return result;
}

/** A sentence ready to stand in an answer: ends with punctuation, followed by its code block. */
function rendered(candidate: Candidate): string {
  const text = /[.!?…:;)"'`*_]$/.test(candidate.text) ? candidate.text : `${candidate.text}.`;
  return candidate.code === undefined ? text : `${text}\n\n\`\`\`\n${candidate.code}\n\`\`\`\n\n`;
}

/**
 * The offline default generator: answers with the sentences of the retrieved sources that share
 * the most (rare) terms with the question, grouped per source in source order and followed by the
 * source's citation `[n]`. It never writes words of its own, so it cannot state anything the
 * knowledge base does not; with no sources it answers the fallback message.
 */
export class ExtractiveAnswerGenerator implements AnswerGenerator {
  readonly name = 'extractive';
  readonly model = 'extractive-v1';
  private readonly maxCharacters: number;
  private readonly maxSentences: number;

  constructor(options: ExtractiveOptions = {}) {
    this.maxCharacters = options.maxCharacters ?? 700;
    this.maxSentences = options.maxSentences ?? 4;
  }

  async *generate(request: GenerationRequest): AsyncIterable<string> {
    const paragraphs = this.compose(request);
    if (paragraphs.length === 0) {
      yield request.fallbackMessage;
      return;
    }
    for (const [index, paragraph] of paragraphs.entries()) {
      request.signal?.throwIfAborted();
      yield index === 0 ? paragraph : `\n\n${paragraph}`;
    }
  }

  /** The answer's paragraphs: one per cited source. */
  private compose(request: GenerationRequest): string[] {
    if (request.sources.length === 0) return [];
    const candidates = request.sources.flatMap((source) =>
      sentencesOf(source).map((sentence) => ({ ...sentence, source, terms: new Set(contentTerms(sentence.text)), score: 0 })),
    );
    if (candidates.length === 0) return [];
    this.score(candidates, request);
    const chosen = this.choose(candidates);
    // Paragraphs go best first, so the answer opens with its most relevant sentence; the
    // citation numbers stay those of the sources.
    const bySource = new Map<number, Candidate[]>();
    for (const candidate of chosen) bySource.set(candidate.source.number, [...(bySource.get(candidate.source.number) ?? []), candidate]);
    return [...bySource.entries()].map(([number, sentences]) => {
      const text = sentences
        .sort((a, b) => a.position - b.position)
        .map(rendered)
        .join(' ')
        .replace(/\s+$/, '');
      return `${text}${text.endsWith('```') ? '\n\n' : ' '}[${number}]`;
    });
  }

  /**
   * Scores each sentence by the question terms it holds, each weighted by its rarity among the
   * candidate sentences (idf), so that "refund" counts more than "account" in a billing FAQ. The
   * latest question's terms weigh twice the terms the conversation added to it. A source's rank
   * breaks ties.
   */
  private score(candidates: Candidate[], request: GenerationRequest): void {
    const latest = new Set(contentTerms(request.question));
    const context = new Set(contentTerms(request.standaloneQuestion).filter((term) => !latest.has(term)));
    const documentFrequency = new Map<string, number>();
    for (const candidate of candidates) {
      for (const term of candidate.terms) if (latest.has(term) || context.has(term)) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
    }
    const weight = (term: string) => Math.log(1 + candidates.length / (documentFrequency.get(term) ?? candidates.length));
    for (const candidate of candidates) {
      let score = 0;
      for (const term of candidate.terms) {
        if (latest.has(term)) score += 2 * weight(term);
        else if (context.has(term)) score += weight(term);
      }
      candidate.score = score - candidate.source.number * 1e-3 - candidate.position * 1e-6;
    }
  }

  /**
   * The best sentences within the length budget, keeping those that score at least
   * RELATIVE_CUTOFF of the best. A matching sentence that is a question (an FAQ's "Q:") brings the sentence after it, the
   * answer. When no sentence shares a term with the question (the source was found by meaning
   * alone), the first sentences of the best source stand in.
   */
  private choose(candidates: Candidate[]): Candidate[] {
    const ranked = [...candidates].sort((a, b) => b.score - a.score);
    const best = ranked[0]!;
    const pool = best.score > 0 ? ranked.filter((candidate) => candidate.score >= best.score * RELATIVE_CUTOFF) : candidates.filter((c) => c.source === best.source);
    const chosen: Candidate[] = [];
    let length = 0;
    const take = (candidate: Candidate | undefined) => {
      if (!candidate || chosen.includes(candidate) || chosen.length >= this.maxSentences) return;
      if (chosen.length > 0 && length + candidate.text.length > this.maxCharacters) return;
      chosen.push(candidate);
      length += candidate.text.length;
    };
    for (const candidate of pool) {
      if (candidate.text.endsWith('?')) {
        take(candidates.find((next) => next.source === candidate.source && next.position === candidate.position + 1));
      } else {
        take(candidate);
      }
    }
    if (chosen.length === 0) take(pool[0]);
    return chosen;
  }
}
