import { sentences } from '../../text/sentences.ts';
import { contentTerms, overlapShare } from '../../text/terms.ts';
import { answerCues, cuesMet } from './answer-cues.ts';
import type { AnswerGenerator, GenerationRequest, GroundingSource } from './provider.ts';

// A sentence scoring below this share of the best one adds words more than answer.
const RELATIVE_CUTOFF = 0.6;
// A sentence that states what the question asks for (a number for "how many", a name for
// "which option") outranks one that only repeats the question's words by this factor, for each
// thing asked that it states ("which port ... when I don't specify one?" asks a number and a default).
const CUE_BOOST = 1.6;
// Question terms found only in the heading a sentence stands under count at this share: the
// heading says what the sentence is about ("work_mem" above "It defaults to 4 megabytes").
const HEADING_SHARE = 0.5;
// A sentence the conversation's earlier answers already gave counts this much: a follow-up wants
// what was not said yet.
const REPEATED_SHARE = 0.2;
// Retrieval ranked the sources: a sentence of the n-th source counts 1 / (1 + SOURCE_DECAY (n - 1)),
// so a lower source's sentence must match clearly better to open the answer.
const SOURCE_DECAY = 0.25;
// The first sentence under a heading the question names ("EAFP" above "Easier to ask for
// forgiveness than permission.") counts this much more.
const LEADING_BOOST = 1.3;
// How much a sentence's precision (the share of its terms the question asked for) weighs.
const PRECISION_SHARE = 0.5;
// Two sentences sharing this share of their terms say the same thing: only the first is kept.
const DUPLICATE_TERMS = 0.8;
// Headings from this level on name what their text describes (see Candidate.label).
const LABEL_LEVEL = 4;
// Deep headings straight after one another name one thing (git's `-u`, `--include-untracked`,
// `--no-include-untracked` are three <dt> of one option): they are one label while it stays this
// short. 41 for those; Python's fractions.Fraction lists five signatures of 40-50 characters each,
// of which the first names it.
const LABEL_NAMES_LENGTH = 80;
// A list introduced by a chosen sentence ("The options are:") comes with at most this many items.
const LIST_ITEMS = 6;

/** A sentence of a source, with what scoring needs. */
type Candidate = {
  source: GroundingSource;
  position: number;
  text: string;
  /** The code block a "...:" sentence introduces. */
  code?: string;
  /** Prose, a list item or a table row (each rendered as what it is). */
  kind: 'prose' | 'item' | 'row';
  /** The first sentence under its heading: where a definition or a description states its subject. */
  leading: boolean;
  /** Terms of the heading the sentence stands under. */
  heading: Set<string>;
  /**
   * The heading, when it names the thing the sentence describes: a deep heading (level 4 and
   * beyond) such as a function's signature or a setting's name, which the HTML conversion makes
   * of a definition term. "Remove any common leading whitespace" answers "how do I strip the
   * margin?" only with its label, `textwrap.dedent(text)`.
   */
  label?: string;
  terms: Set<string>;
  score: number;
};

export type ExtractiveOptions = {
  /** Longest answer in characters, citations and code excluded (default 700). */
  maxCharacters?: number;
  /** Most sentences in an answer (default 4). */
  maxSentences?: number;
};

// Markdown that reads badly inside a sentence of an answer: list bullets, quote marks, table pipes.
const LINE_MARKUP = /^\s{0,3}(?:[-*+]\s+|\d{1,3}[.)]\s+|>\s?|\|)/;
const LIST_ITEM = /^\s{0,3}(?:[-*+]|\d{1,3}[.)])\s+/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;

/** Blank-line separated blocks of a text; a fenced code block is one block even with blank lines. */
function blocksOf(text: string): { code: boolean; lines: string[] }[] {
  const blocks: { code: boolean; lines: string[] }[] = [];
  let current: { code: boolean; lines: string[] } | undefined;
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const marker = /^\s*(```|~~~)/.exec(line)?.[1];
    if (marker && (fence === undefined || marker === fence)) {
      if (fence === undefined) blocks.push((current = { code: true, lines: [] }));
      else current = undefined;
      fence = fence === undefined ? marker : undefined;
      continue;
    }
    if (fence !== undefined) {
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
 * Prose as a reader should see it quoted: the Markdown escapes of an HTML conversion undone where
 * they protect nothing mid-sentence (`some\_command` is `some_command`).
 */
export function readable(text: string): string {
  return text.replace(/\\([_\\`~>#+=.!-])/g, '$1').trim();
}

/** A table row as a line of text: its cells separated by dashes. */
function rowText(line: string): string {
  return line
    .split('|')
    .map((cell) => cell.trim())
    .filter(Boolean)
    .join(' — ');
}

// A chunk may begin mid-sentence (its overlap starts at a word): a first sentence that starts
// lowercase or with an operator is such a fragment, and is not quoted.
const FRAGMENT = /^[a-z<>=)\]},;:.]/;

/**
 * The sentences of a source: wrapped lines of a paragraph are joined, list items stand alone,
 * table rows stand as lines (with their header's words as context), a code block stays with the
 * sentence that introduces it ("You can build it with:"), and each sentence knows the heading it
 * stands under and whether it is the first one there.
 */
function sentencesOf(source: GroundingSource): Candidate[] {
  const result: Candidate[] = [];
  let heading = new Set<string>();
  let label: string | undefined;
  let leading = false;
  // Whether the last line read was a deep heading: the next deep heading then joins its label.
  let labelOpen = false;
  const add = (text: string, kind: Candidate['kind'], context: Set<string>) => {
    labelOpen = false;
    if (text.length < 12) return;
    result.push({ source, position: result.length, text, kind, heading: context, label, leading, terms: new Set(contentTerms(text)), score: 0 });
    leading = false;
  };
  const sections = source.sections?.length ? source.sections : [{ start: 0, headingPath: [] }];
  const blocks = sections.flatMap((section, index) => {
    const text = source.text.slice(section.start, sections[index + 1]?.start ?? source.text.length);
    return blocksOf(text).map((block, position) => ({ ...block, headings: position === 0 ? section.headingPath : undefined }));
  });
  for (const block of blocks) {
    // A chunk's first block stands under the headings above the chunk until a heading line says otherwise.
    if (block.headings) {
      heading = new Set(block.headings.flatMap((title) => contentTerms(title)));
      label = undefined;
      labelOpen = false;
    }
    const previous = result.at(-1);
    if (block.code) {
      if (previous?.text.endsWith(':') && previous.code === undefined) previous.code = block.lines.join('\n');
      continue;
    }
    const paragraphs: { text: string; kind: Candidate['kind'] }[] = [];
    let header: Set<string> | undefined;
    for (const line of block.lines) {
      const title = HEADING.exec(line);
      if (title) {
        const deep = title[1]!.length >= LABEL_LEVEL;
        const name = readable(title[2]!);
        if (deep && labelOpen && label !== undefined) {
          // Another name of the same thing: kept in the label (and its words in the heading) while short.
          if (label.length + name.length + 2 <= LABEL_NAMES_LENGTH) {
            label = `${label}, ${name}`;
            heading = new Set([...heading, ...contentTerms(title[2]!)]);
          }
        } else {
          heading = new Set(contentTerms(title[2]!));
          label = deep ? name : undefined;
        }
        labelOpen = deep;
        leading = true;
        continue;
      }
      if (/^\s*\|?\s*:?-{3,}/.test(line)) continue;
      if (line.trimStart().startsWith('|')) {
        // A table's first row names its columns: context for every row, not an answer itself.
        if (header) paragraphs.push({ text: rowText(line), kind: 'row' });
        else header = new Set(contentTerms(rowText(line)));
        continue;
      }
      const item = LIST_ITEM.test(line);
      const text = line.replace(LINE_MARKUP, '').trim();
      if (paragraphs.length === 0 || item || paragraphs.at(-1)!.kind !== 'prose') paragraphs.push({ text, kind: item ? 'item' : 'prose' });
      else paragraphs[paragraphs.length - 1]!.text += ` ${text}`;
    }
    for (const [index, paragraph] of paragraphs.entries()) {
      if (paragraph.kind === 'row') {
        add(readable(paragraph.text), 'row', new Set([...heading, ...(header ?? [])]));
        continue;
      }
      const split = sentences(readable(paragraph.text));
      if (index === 0 && FRAGMENT.test(split[0] ?? '')) split.shift();
      for (const sentence of split) add(sentence, paragraph.kind, heading);
    }
  }
  return result;
}

/** A sentence ready to stand in an answer: ends with punctuation, followed by its code block. */
function rendered(candidate: Candidate): string {
  const text = candidate.kind === 'row' || /[.!?…:;)"'`*_]$/.test(candidate.text) ? candidate.text : `${candidate.text}.`;
  return candidate.code === undefined ? text : `${text}\n\n\`\`\`\n${candidate.code}\n\`\`\`\n\n`;
}

/**
 * The offline default generator: answers with the sentences of the retrieved sources that best
 * state what the question asks, grouped per source (best source first) and followed by the
 * source's citation `[n]`. It never writes words of its own, so it cannot state anything the
 * knowledge base does not; with no sources it answers the fallback message.
 */
export class ExtractiveAnswerGenerator implements AnswerGenerator {
  readonly name = 'extractive';
  readonly model = 'extractive-v2';
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
    const candidates = request.sources.flatMap(sentencesOf);
    if (candidates.length === 0) return [];
    this.score(candidates, request);
    const chosen = this.choose(candidates);
    // Paragraphs go best first, so the answer opens with its most relevant sentence; the
    // citation numbers stay those of the sources.
    const bySource = new Map<number, Candidate[]>();
    for (const candidate of chosen) bySource.set(candidate.source.number, [...(bySource.get(candidate.source.number) ?? []), candidate]);
    return [...bySource.entries()].map(([number, picked]) => {
      const parts: string[] = [];
      const labelled = new Set<string>();
      for (const candidate of picked.sort((a, b) => a.position - b.position)) {
        // The first sentence under a label says what it describes, unless it names it itself.
        const lead = candidate.label && !labelled.has(candidate.label) && !candidate.text.includes(candidate.label) ? `${candidate.label}: ` : '';
        if (candidate.label) labelled.add(candidate.label);
        const text = lead + rendered(candidate);
        const last = parts.at(-1);
        // List items stay a list, apart from the prose around them; prose runs on in one paragraph.
        if (candidate.kind !== 'prose') parts.push(`${last === undefined || last.endsWith('\n') ? '' : '\n\n'}- ${text}\n`);
        else parts.push(last === undefined ? text : last.endsWith('\n') ? `\n${text}` : ` ${text}`);
      }
      const text = parts.join('').replace(/\s+$/, '');
      return `${text}${/```$|\n- [^\n]*$/.test(text) ? '\n\n' : ' '}[${number}]`;
    });
  }

  /**
   * Scores each sentence by the question terms it holds, each weighted by its rarity among the
   * candidate sentences (idf), so that "refund" counts more than "account" in a billing FAQ. The
   * latest question's terms weigh twice the terms the conversation added to it; terms only its
   * heading holds count HEADING_SHARE. A sentence that states what the question asks for (see
   * answer-cues.ts) gains CUE_BOOST for each cue it meets; one an earlier answer already gave
   * keeps REPEATED_SHARE. A source's rank breaks ties.
   */
  private score(candidates: Candidate[], request: GenerationRequest): void {
    const latest = new Set(contentTerms(request.question));
    const context = new Set(contentTerms(request.standaloneQuestion).filter((term) => !latest.has(term)));
    // Each question term's weight, from the candidates holding it in their terms or heading.
    const weights = new Map<string, number>();
    for (const term of [...latest, ...context]) {
      let holding = 0;
      for (const candidate of candidates) if (candidate.terms.has(term) || candidate.heading.has(term)) holding += 1;
      weights.set(term, Math.log(1 + candidates.length / (holding || candidates.length)));
    }
    const weight = (term: string) => weights.get(term)!;
    const cues = answerCues(request.standaloneQuestion);
    const earlier = request.history.filter((turn) => turn.role === 'assistant').map((turn) => turn.content);
    for (const candidate of candidates) {
      let score = 0;
      for (const term of latest) {
        if (candidate.terms.has(term)) score += 2 * weight(term);
        else if (candidate.heading.has(term)) score += 2 * HEADING_SHARE * weight(term);
      }
      for (const term of context) {
        if (candidate.terms.has(term)) score += weight(term);
        else if (candidate.heading.has(term)) score += HEADING_SHARE * weight(term);
      }
      // Of two sentences holding the same question terms, the one saying less else is the more
      // direct answer ("You can build a 32 bit binary using:" over "In case of build errors when
      // trying to build a 32 bit binary, try the following steps:").
      let matched = 0;
      for (const term of candidate.terms) if (latest.has(term) || context.has(term)) matched += 1;
      score *= 1 - PRECISION_SHARE + (PRECISION_SHARE * matched) / Math.max(candidate.terms.size, 1);
      // The first sentence under a heading the question names is where its subject is defined.
      if (candidate.leading && [...candidate.heading].some((term) => latest.has(term) || context.has(term))) score *= LEADING_BOOST;
      // A sentence that introduces a code block states the code too ("You can build it with:").
      if (score > 0) score *= CUE_BOOST ** cuesMet(`${candidate.text}\n${candidate.code ?? ''}`, cues);
      if (earlier.some((answer) => answer.includes(candidate.text))) score *= REPEATED_SHARE;
      score /= 1 + SOURCE_DECAY * (candidate.source.number - 1);
      candidate.score = score - candidate.source.number * 1e-3 - candidate.position * 1e-6;
    }
  }

  /**
   * The best sentences within the length budget, keeping those that score at least
   * RELATIVE_CUTOFF of the best and are not near-duplicates of one already taken. A matching
   * sentence that is a question (an FAQ's "Q:") brings the sentence after it, the answer; one
   * that introduces a list ("...:") brings the list. When no sentence shares a term with the
   * question (the source was found by meaning alone), the first sentences of the best source
   * stand in.
   */
  private choose(candidates: Candidate[]): Candidate[] {
    const ranked = [...candidates].sort((a, b) => b.score - a.score);
    const best = ranked[0]!;
    const pool = best.score > 0 ? ranked.filter((candidate) => candidate.score >= best.score * RELATIVE_CUTOFF) : candidates.filter((c) => c.source === best.source);
    const chosen: Candidate[] = [];
    let length = 0;
    const next = (candidate: Candidate, offset: number) => candidates.find((other) => other.source === candidate.source && other.position === candidate.position + offset);
    const take = (candidate: Candidate | undefined, bonus = false) => {
      if (!candidate || chosen.includes(candidate)) return false;
      if (!bonus && chosen.length >= this.maxSentences) return false;
      if (chosen.length > 0 && length + candidate.text.length > this.maxCharacters) return false;
      if (chosen.some((other) => overlapShare(other.terms, candidate.terms) >= DUPLICATE_TERMS && other.terms.size > 2)) return false;
      chosen.push(candidate);
      length += candidate.text.length;
      return true;
    };
    for (const candidate of pool) {
      if (candidate.text.endsWith('?')) {
        take(next(candidate, 1));
      } else if (take(candidate) && candidate.text.endsWith(':') && candidate.code === undefined) {
        for (let offset = 1; offset <= LIST_ITEMS; offset += 1) {
          const item = next(candidate, offset);
          if (!item || item.kind === 'prose' || !take(item, true)) break;
        }
      }
    }
    if (chosen.length === 0) take(pool[0]);
    return chosen;
  }
}
