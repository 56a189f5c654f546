import type { ChunkOptions } from './types.ts';
import {
  cutToken,
  isLineStart,
  proseBoundaryStrength,
  splitLines,
  splitListItems,
  splitSentences,
  splitWords,
  type Range,
} from './text-boundaries.ts';

/**
 * What a unit of text is, which decides how it may be split further and where an overlap may start
 * inside it. Blocks come from the document structure (paragraph, heading, fence, table, codeBlock);
 * the others only ever come from splitting a block that does not fit.
 */
export type UnitKind = BlockKind | PartKind;
export type BlockKind = 'paragraph' | 'heading' | 'fence' | 'table' | 'codeBlock';
type PartKind = 'item' | 'sentence' | 'line' | 'row' | 'word' | 'piece';

/** A trimmed range of the content with its kind; `boundary` rates its start as an overlap start (see BOUNDARY_STRENGTH). */
export type Unit = Range & { kind: UnitKind; boundary: number };

/**
 * The finer kinds a unit that is too long is split into, tried in order until one yields at least
 * two parts. Fences and code split on lines only once they alone exceed the chunk size; a table
 * splits between rows and a row never splits, so a row longer than the chunk size is the one unit
 * of Markdown that becomes an oversized chunk (besides a single grapheme longer than a tiny chunk).
 */
const SPLIT_ORDER: Record<UnitKind, readonly PartKind[]> = {
  paragraph: ['item', 'sentence', 'word', 'piece'],
  heading: ['word', 'piece'],
  item: ['sentence', 'word', 'piece'],
  sentence: ['word', 'piece'],
  fence: ['line', 'word', 'piece'],
  codeBlock: ['line', 'word', 'piece'],
  line: ['word', 'piece'],
  table: ['row'],
  row: [],
  word: ['piece'],
  piece: [],
};

const SPLITTERS: Record<PartKind, (content: string, start: number, end: number, chunkSize: number) => Range[]> = {
  item: splitListItems,
  sentence: splitSentences,
  line: splitLines,
  row: splitLines,
  word: splitWords,
  piece: cutToken,
};

/** The `boundary` of a block: its start is the best place for an overlap to start. */
export const BLOCK_BOUNDARY = 3;

/** 3: block start, 2: sentence, list item or line start, 1: word start, 0: inside a word (never an overlap start). */
const BOUNDARY_STRENGTH: Record<UnitKind, number> = {
  paragraph: BLOCK_BOUNDARY,
  heading: BLOCK_BOUNDARY,
  fence: BLOCK_BOUNDARY,
  table: BLOCK_BOUNDARY,
  codeBlock: BLOCK_BOUNDARY,
  item: 2,
  sentence: 2,
  line: 2,
  row: 2,
  word: 1,
  piece: 0,
};

/** Units an overlap may start inside of, at a sentence or word start; headings, fences and tables only at their start. */
const PROSE = new Set<UnitKind>(['paragraph', 'item', 'sentence']);

/** Units split to top up a nearly empty chunk (see packUnits) even though they would fit a chunk alone. */
const FILLABLE = new Set<UnitKind>(['paragraph', 'item', 'codeBlock']);

/** Oversized units that start a chunk of their own rather than fill the rest of the previous one. */
const STARTS_A_CHUNK = new Set<UnitKind>(['fence', 'table']);

/** Pushes the parts of a unit one level finer onto the `pending` stack, first part on top; false when it cannot be split. */
function pushParts(pending: Unit[], content: string, unit: Unit, chunkSize: number): boolean {
  for (const kind of SPLIT_ORDER[unit.kind]) {
    const ranges = SPLITTERS[kind](content, unit.start, unit.end, chunkSize);
    if (ranges.length < 2) continue;
    for (let index = ranges.length - 1; index >= 0; index--) {
      const { start, end } = ranges[index] as Range;
      // The first part starts where its parent did and so inherits the parent's boundary.
      pending.push({ start, end, kind, boundary: start === unit.start ? unit.boundary : BOUNDARY_STRENGTH[kind] });
    }
    return true;
  }
  return false;
}

type OpenChunk = Range & { units: Unit[] };

/**
 * Where the next chunk starts so that it repeats the tail of `previous`: the first sentence start
 * (or block, list item or line start) in `[target, target + window]`, else the first word start at
 * or after `target`, else -1 (no overlap). Never inside a fence or table that fitted whole.
 */
function overlapStart(content: string, previous: OpenChunk, target: number, window: number): number {
  const from = Math.max(target, previous.start + 1);
  const preferredUntil = target + window;
  let fallback = -1;
  let index = previous.units.length;
  while (index > 0 && (previous.units[index - 1] as Unit).end > from) index--;
  for (const unit of previous.units.slice(index)) {
    if (unit.start >= from) {
      if (unit.boundary >= 2 && unit.start <= preferredUntil) return unit.start;
      if (unit.boundary >= 1 && fallback < 0) fallback = unit.start;
    }
    const prose = PROSE.has(unit.kind);
    if (!prose && unit.kind !== 'codeBlock') continue;
    for (let position = Math.max(unit.start + 1, from); position < unit.end; position++) {
      if (fallback >= 0 && position > preferredUntil) return fallback;
      const strength = prose ? proseBoundaryStrength(content, position) : isLineStart(content, position) ? 2 : 0;
      if (strength >= 2 && position <= preferredUntil) return position;
      if (strength >= 1 && fallback < 0) fallback = position;
    }
  }
  return fallback;
}

/** A new chunk holding `unit`, preceded by the tail of `previous` as far as both fit one chunk. */
function openChunk(content: string, previous: OpenChunk | null, unit: Unit, { chunkSize, chunkOverlap }: ChunkOptions): OpenChunk {
  if (previous === null || unit.end - unit.start > chunkSize) return { start: unit.start, end: unit.end, units: [unit] };
  const target = Math.max(previous.end - chunkOverlap, unit.end - chunkSize);
  const start = overlapStart(content, previous, target, chunkOverlap / 2);
  if (start < 0) return { start: unit.start, end: unit.end, units: [unit] };
  return { start, end: unit.end, units: [...previous.units.filter((repeated) => repeated.end > start), unit] };
}

/**
 * Packs consecutive units of one section into chunks of at most `chunkSize` characters and returns
 * their ranges. A unit that does not fit the current chunk closes it; a unit larger than a whole
 * chunk is split one level finer (sentences, then words, ...) and its parts are packed in turn.
 * Each new chunk starts with about `chunkOverlap` characters of the previous one. Greedy packing
 * already puts a small trailing unit into the previous chunk whenever it fits, so a tiny tail only
 * becomes a chunk of its own when the previous chunk has no room left for it.
 */
export function packUnits(content: string, units: readonly Unit[], options: ChunkOptions): Range[] {
  const { chunkSize } = options;
  const chunks: Range[] = [];
  const pending = units.slice().reverse();
  let chunk: OpenChunk | null = null;
  let previous: OpenChunk | null = null;

  for (let unit = pending.pop(); unit !== undefined; unit = pending.pop()) {
    const length = unit.end - unit.start;
    if (chunk === null) {
      if (length > chunkSize && pushParts(pending, content, unit, chunkSize)) continue;
      chunk = openChunk(content, previous, unit, options);
      continue;
    }
    if (unit.end - chunk.start <= chunkSize) {
      chunk.end = unit.end;
      chunk.units.push(unit);
      continue;
    }
    // A chunk under a quarter full (a bare heading, a one-line lead-in) is a poor retrieval unit, so
    // it is topped up with the first parts of the next unit. A unit that must be split anyway fills
    // the rest of the chunk, except a fence or table, which starts a chunk of its own.
    const nearlyEmpty = chunk.end - chunk.start < chunkSize / 4;
    const fillWithParts = length > chunkSize ? nearlyEmpty || !STARTS_A_CHUNK.has(unit.kind) : nearlyEmpty && FILLABLE.has(unit.kind);
    if (fillWithParts && pushParts(pending, content, unit, chunkSize)) continue;
    chunks.push({ start: chunk.start, end: chunk.end });
    previous = chunk;
    chunk = null;
    pending.push(unit);
  }
  if (chunk !== null) chunks.push({ start: chunk.start, end: chunk.end });
  return chunks;
}
