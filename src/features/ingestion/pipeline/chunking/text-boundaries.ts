/**
 * Character-level boundaries (whitespace, sentences, words, lines, graphemes) over a range of a
 * string. Every function works on offsets into the original content and never copies it, so the
 * chunker stays linear in the input size: one charCodeAt loop per level actually used.
 */

/** A half-open range `[start, end)` of UTF-16 offsets. */
export type Range = { start: number; end: number };

const NEWLINE = 10;

/** Exactly the characters JavaScript's `\s` matches, so "non-whitespace" means the same here and in `/\S/`. */
export function isWhitespace(code: number): boolean {
  if (code <= 32) return code === 32 || (code >= 9 && code <= 13);
  if (code < 160) return false;
  return (
    code === 160 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** `. ! ? …`: end a sentence when whitespace follows. */
function isSentenceTerminator(code: number): boolean {
  return code === 46 || code === 33 || code === 63 || code === 0x2026;
}

/** `。！？`: end a sentence even with no space after it, as CJK text has none. */
function isCjkTerminator(code: number): boolean {
  return code === 0x3002 || code === 0xff01 || code === 0xff1f;
}

/** Closing quotes, brackets and emphasis markers that may sit between a terminator and the space after it. */
function isCloser(code: number): boolean {
  return (
    code === 34 || // "
    code === 39 || // '
    code === 41 || // )
    code === 42 || // *
    code === 93 || // ]
    code === 95 || // _
    code === 96 || // `
    code === 125 || // }
    code === 0x2019 || // ’
    code === 0x201d || // ”
    code === 0xbb || // »
    code === 0x300d || // 」
    code === 0x300f || // 』
    code === 0xff09 || // ）
    code === 0x3011 // 】
  );
}

/** First non-whitespace offset in `[start, end)`, or `end`. */
export function skipWhitespace(content: string, start: number, end: number): number {
  let position = start;
  while (position < end && isWhitespace(content.charCodeAt(position))) position++;
  return position;
}

/** Offset just after the last non-whitespace character in `[start, end)`, or `start`. */
export function trimEnd(content: string, start: number, end: number): number {
  let position = end;
  while (position > start && isWhitespace(content.charCodeAt(position - 1))) position--;
  return position;
}

/** Offset of the next `\n` at or after `start`, or `end` when the range has none. */
export function lineBreak(content: string, start: number, end: number): number {
  const newline = content.indexOf('\n', start);
  return newline < 0 || newline > end ? end : newline;
}

/** Appends `[start, end)` without its surrounding whitespace, unless nothing is left. */
function pushTrimmed(ranges: Range[], content: string, start: number, end: number): void {
  const trimmedStart = skipWhitespace(content, start, end);
  const trimmedEnd = trimEnd(content, trimmedStart, end);
  if (trimmedEnd > trimmedStart) ranges.push({ start: trimmedStart, end: trimmedEnd });
}

/** `-`, `*`, `+` or `1.` / `1)` followed by a space or tab: the line starts a list item. */
export function isListMarker(content: string, position: number, lineEnd: number): boolean {
  let after = position;
  const code = content.charCodeAt(after);
  if (code === 45 || code === 42 || code === 43) {
    after++;
  } else {
    // CommonMark caps an ordered list number at 9 digits.
    while (after < lineEnd && after - position < 9 && isDigit(content.charCodeAt(after))) after++;
    const delimiter = content.charCodeAt(after);
    if (after === position || (delimiter !== 46 && delimiter !== 41)) return false;
    after++;
  }
  const next = content.charCodeAt(after);
  return after < lineEnd && (next === 32 || next === 9);
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** Sentences: each ends after `. ! ? …` (and any closing quote or bracket) followed by whitespace, or after `。！？`. */
export function splitSentences(content: string, start: number, end: number): Range[] {
  const ranges: Range[] = [];
  let sentenceStart = start;
  for (let position = start; position < end; position++) {
    const code = content.charCodeAt(position);
    const cjk = isCjkTerminator(code);
    if (!cjk && !isSentenceTerminator(code)) continue;
    let after = position + 1;
    while (after < end && isCloser(content.charCodeAt(after))) after++;
    if (after >= end || (!cjk && !isWhitespace(content.charCodeAt(after)))) continue;
    pushTrimmed(ranges, content, sentenceStart, after);
    sentenceStart = after;
    position = after - 1;
  }
  pushTrimmed(ranges, content, sentenceStart, end);
  return ranges;
}

/** Whitespace-separated tokens. */
export function splitWords(content: string, start: number, end: number): Range[] {
  const ranges: Range[] = [];
  let position = skipWhitespace(content, start, end);
  while (position < end) {
    let wordEnd = position + 1;
    while (wordEnd < end && !isWhitespace(content.charCodeAt(wordEnd))) wordEnd++;
    ranges.push({ start: position, end: wordEnd });
    position = skipWhitespace(content, wordEnd, end);
  }
  return ranges;
}

/** List items: a new item starts at every line that begins with a list marker (text before the first one is an item too). */
export function splitListItems(content: string, start: number, end: number): Range[] {
  const ranges: Range[] = [];
  let itemStart = start;
  let lineStart = lineBreak(content, start, end) + 1;
  while (lineStart < end) {
    const lineEnd = lineBreak(content, lineStart, end);
    const first = skipWhitespace(content, lineStart, lineEnd);
    if (first < lineEnd && isListMarker(content, first, lineEnd)) {
      pushTrimmed(ranges, content, itemStart, first);
      itemStart = first;
    }
    lineStart = lineEnd + 1;
  }
  pushTrimmed(ranges, content, itemStart, end);
  return ranges;
}

/**
 * Non-blank lines, each from its line start (indentation kept, as it matters in code) to its last
 * non-whitespace character; the first one starts at `start`.
 */
export function splitLines(content: string, start: number, end: number): Range[] {
  const ranges: Range[] = [];
  let lineStart = start;
  while (lineStart < end) {
    const lineEnd = lineBreak(content, lineStart, end);
    const trimmed = trimEnd(content, lineStart, lineEnd);
    if (trimmed > lineStart) ranges.push({ start: lineStart, end: trimmed });
    lineStart = lineEnd + 1;
  }
  return ranges;
}

// Code points that join the grapheme before them: combining marks, emoji skin tones, variation
// selectors (both in \p{M} or \p{Emoji_Modifier}) and the zero-width joiner. Sticky, so a test
// reads one code point. Intl.Segmenter is not used: V8's segment iteration and containing() grow
// quadratically with the string (10 s for a 1 MB token).
const JOINS_PREVIOUS = /[\p{M}\p{Emoji_Modifier}\u200D]/uy;

function isRegionalIndicator(content: string, position: number): boolean {
  const low = content.charCodeAt(position + 1);
  return content.charCodeAt(position) === 0xd83c && low >= 0xdde6 && low <= 0xddff;
}

/**
 * Whether a cut at `position` keeps every grapheme whole: not inside a surrogate pair or a CR LF,
 * not before a combining mark, skin tone or joiner, not after a joiner, not inside a flag (a pair
 * of regional indicators, counted back no further than `floor`).
 */
function isGraphemeBoundary(content: string, position: number, floor: number): boolean {
  const code = content.charCodeAt(position);
  const previous = content.charCodeAt(position - 1);
  if (code >= 0xdc00 && code <= 0xdfff && previous >= 0xd800 && previous <= 0xdbff) return false;
  if ((code === 10 && previous === 13) || previous === 0x200d) return false;
  JOINS_PREVIOUS.lastIndex = position;
  if (JOINS_PREVIOUS.test(content)) return false;
  if (!isRegionalIndicator(content, position)) return true;
  let indicators = 0;
  for (let before = position - 2; before >= floor && isRegionalIndicator(content, before); before -= 2) indicators++;
  return indicators % 2 === 0;
}

/** After one of these a long token (a URL, a path, a CJK run) reads best when cut. */
function isSoftBreak(code: number): boolean {
  return (
    code === 47 || // /
    code === 45 || // -
    code === 95 || // _
    code === 46 || // .
    code === 44 || // ,
    code === 59 || // ;
    code === 58 || // :
    code === 63 || // ?
    code === 38 || // &
    code === 61 || // =
    code === 0x3001 || // 、
    code === 0xff0c // ，
  );
}

/**
 * The last resort for a token with no whitespace: pieces of at most `limit` characters, cut after
 * punctuation in the last quarter of a piece when there is some, else at the last grapheme
 * boundary. A single grapheme longer than `limit` stays whole.
 */
export function cutToken(content: string, start: number, end: number, limit: number): Range[] {
  const ranges: Range[] = [];
  let pieceStart = start;
  while (end - pieceStart > limit) {
    const hardCut = pieceStart + limit;
    let cut = hardCut;
    while (cut > hardCut - limit / 4 && !(isSoftBreak(content.charCodeAt(cut - 1)) && isGraphemeBoundary(content, cut, pieceStart))) cut--;
    if (cut <= hardCut - limit / 4) {
      cut = hardCut;
      while (cut > pieceStart && !isGraphemeBoundary(content, cut, pieceStart)) cut--;
      if (cut === pieceStart) {
        cut = hardCut;
        while (cut < end && !isGraphemeBoundary(content, cut, pieceStart)) cut++;
      }
    }
    pushTrimmed(ranges, content, pieceStart, cut);
    pieceStart = cut;
  }
  pushTrimmed(ranges, content, pieceStart, end);
  return ranges;
}

/**
 * How good a place `position` is to start an overlap inside running text: 2 at a sentence start,
 * 1 at any other word start, 0 inside a word or on whitespace.
 */
export function proseBoundaryStrength(content: string, position: number): number {
  const code = content.charCodeAt(position);
  if (position === 0 || isWhitespace(code)) return 0;
  const previous = content.charCodeAt(position - 1);
  if (isCjkTerminator(previous)) return 2;
  if (!isWhitespace(previous)) return 0;
  let before = position - 1;
  while (before >= 0 && isWhitespace(content.charCodeAt(before))) before--;
  while (before >= 0 && isCloser(content.charCodeAt(before))) before--;
  return before >= 0 && (isSentenceTerminator(content.charCodeAt(before)) || isCjkTerminator(content.charCodeAt(before))) ? 2 : 1;
}

/** True at the first character of a line. */
export function isLineStart(content: string, position: number): boolean {
  return position === 0 || content.charCodeAt(position - 1) === NEWLINE;
}
