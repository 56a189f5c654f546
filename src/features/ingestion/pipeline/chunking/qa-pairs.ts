import { block as createBlock, type Block } from './markdown-blocks.ts';
import { isWhitespace, lineBreak, skipWhitespace, trimEnd } from './text-boundaries.ts';

function skipSpaces(text: string, position: number): number {
  let after = position;
  while (after < text.length && isWhitespace(text.charCodeAt(after))) after++;
  return after;
}

function isLabelPunctuation(text: string, position: number): boolean {
  return position < text.length && ':.)'.includes(text.charAt(position));
}

/** `Q:`, `Q1.`, `Question 2:`, `**Q:**`, `**Question**:` followed by the question (possibly empty). */
function labelledQuestion(text: string, emphasis: string): string | undefined {
  let position = emphasis.length;
  const label = text.slice(position, position + 8).toLowerCase();
  if (label === 'question') position += 8;
  else if (label.startsWith('q')) position += 1;
  else return undefined;
  position = skipSpaces(text, position);
  while (position < text.length && text.charCodeAt(position) >= 48 && text.charCodeAt(position) <= 57) position++;
  position = skipSpaces(text, position);
  let punctuated = isLabelPunctuation(text, position);
  if (punctuated) position++;
  let closed = false;
  if (emphasis !== '' && text.startsWith(emphasis, position)) {
    closed = true;
    position += emphasis.length;
    if (!punctuated && isLabelPunctuation(text, position)) {
      punctuated = true;
      position++;
    }
  }
  // `Q.E.D.` or `Quick:` are not labels: the label must end in punctuation or emphasis, then a space.
  if (!(punctuated || closed) || (position < text.length && !isWhitespace(text.charCodeAt(position)))) return undefined;
  const title = text.slice(position).trim();
  return emphasis !== '' && !closed && title.endsWith(emphasis) ? title.slice(0, -emphasis.length).trim() : title;
}

/**
 * The question a line of a `qa_pair` record starts, or undefined: a labelled question (`Q: ...`,
 * `Question: ...`, `**Q:** ...`, `**Question** ...`) or a whole line in bold that ends in a
 * question mark. Answer labels (`A:`) start nothing: the answer belongs to its question.
 */
export function questionTitle(line: string): string | undefined {
  const text = line.trim();
  const emphasis = text.startsWith('**') ? '**' : text.startsWith('__') ? '__' : '';
  const labelled = labelledQuestion(text, emphasis);
  if (labelled !== undefined) return labelled;
  if (emphasis === '' || text.length <= 2 * emphasis.length || !text.endsWith(emphasis)) return undefined;
  const inner = text.slice(emphasis.length, -emphasis.length).trim();
  return inner.endsWith('?') && !inner.includes(emphasis) ? inner : undefined;
}

/** The trimmed text of the first non-blank line at or after `from`. */
function nextLineText(content: string, from: number): string {
  const first = skipWhitespace(content, from, content.length);
  return content.slice(first, trimEnd(content, first, lineBreak(content, first, content.length)));
}

/**
 * Cuts paragraphs at every line that starts a question and titles each part that starts with one,
 * so that `Q: ...\nA: ...\nQ: ...` written without blank lines still gives one section per pair.
 * A label alone on its line (`**Question**`) takes the next line as its question.
 */
export function splitQuestionBlocks(content: string, blocks: readonly Block[]): Block[] {
  const result: Block[] = [];
  for (const paragraph of blocks) {
    if (paragraph.kind !== 'paragraph') {
      result.push(paragraph);
      continue;
    }
    let partStart = paragraph.start;
    let partTitle: string | null = null;
    let lineStart = paragraph.start;
    while (lineStart < paragraph.end) {
      const lineEnd = lineBreak(content, lineStart, paragraph.end);
      const first = skipWhitespace(content, lineStart, lineEnd);
      const title = questionTitle(content.slice(first, lineEnd));
      if (title !== undefined) {
        if (first > partStart) {
          result.push(createBlock('paragraph', partStart, trimEnd(content, partStart, first), 0, partTitle));
          partStart = first;
        }
        partTitle = title === '' ? nextLineText(content, lineEnd) : title;
      }
      lineStart = lineEnd + 1;
    }
    result.push(createBlock('paragraph', partStart, paragraph.end, 0, partTitle));
  }
  return result;
}
