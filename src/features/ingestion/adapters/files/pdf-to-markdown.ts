import { getDocumentProxy } from 'unpdf';
import { boundExceeded, MAX_CHARACTERS, MAX_PAGES } from './bounds.ts';
import { DocumentError } from './document-error.ts';

/** A PDF's text as Markdown, with where each page starts in it. */
export type PdfText = {
  markdown: string;
  /** Offset in `markdown` where page 1, 2, ... starts (a page without text starts where the next does). */
  pageStarts: number[];
  /** The document information's Title, when set. */
  title: string | null;
  pageCount: number;
};

/**
 * A line is a heading when its font is at least this many times the body text's size. Body text
 * in reports and manuals is 9-12 pt and their headings 13-24 pt (13/11 = 1.18 is the smallest step
 * in LaTeX's and Word's default styles), while superscripts and footnotes are smaller, never larger:
 * 1.15 takes every such heading and no body line.
 */
const HEADING_RATIO = 1.15;
/** Longer "large" lines are a pull quote or a cover blurb, not a heading. */
const HEADING_MAX_CHARACTERS = 200;
/** Baselines further apart than this many font sizes separate two paragraphs (1.2 is single spacing). */
const PARAGRAPH_GAP = 1.6;

type Line = { text: string; size: number; y: number };
type TextItem = { str: string; transform: number[]; width: number; hasEOL: boolean };

function isTextItem(item: object): item is TextItem {
  return 'str' in item;
}

/** The lines of a page in reading order as pdf.js gives them, with each line's font size. */
function pageLines(items: object[]): Line[] {
  const lines: Line[] = [];
  let current: (Line & { end: number; chars: Map<number, number> }) | undefined;
  let broke = true;
  for (const item of items) {
    if (!isTextItem(item)) continue;
    const [, , c = 0, d = 0, x = 0, y = 0] = item.transform;
    const size = Math.round(Math.hypot(c, d) * 2) / 2;
    if (item.str !== '') {
      if (!current || broke || Math.abs(current.y - y) > size / 2) {
        if (current) lines.push(current);
        current = { text: '', size, y, end: x, chars: new Map() };
      }
      const gap = x - current.end;
      if (current.text !== '' && gap > size * 0.15 && !/\s$/.test(current.text) && !/^\s/.test(item.str)) current.text += ' ';
      current.text += item.str;
      current.end = x + item.width;
      // The line's size is that of most of its characters (a bold first word may be larger).
      current.chars.set(size, (current.chars.get(size) ?? 0) + item.str.length);
      current.size = [...current.chars].reduce((best, entry) => (entry[1] > best[1] ? entry : best))[0];
    }
    broke = item.hasEOL;
  }
  if (current) lines.push(current);
  return lines
    .map((line) => ({ text: line.text.replace(/\s+/g, ' ').trim(), size: line.size, y: line.y }))
    .filter((line) => line.text !== '');
}

/** The font size that most characters of the document are set in. */
function bodySize(pages: Line[][]): number {
  const characters = new Map<number, number>();
  for (const line of pages.flat()) characters.set(line.size, (characters.get(line.size) ?? 0) + line.text.length);
  return [...characters].reduce((best, entry) => (entry[1] > best[1] ? entry : best), [0, 0])[0];
}

/** A page's lines as Markdown blocks: headings by font size, the other lines joined into paragraphs. */
function pageBlocks(lines: Line[], isHeading: (line: Line) => boolean, level: (size: number) => number): string[] {
  const blocks: string[] = [];
  let paragraph = '';
  let previous: Line | undefined;
  let heading: Line | undefined;
  const flush = () => {
    if (paragraph !== '') blocks.push(paragraph.replace(/^(#{1,6}\s)/, '\\$1'));
    if (heading) blocks.push(`${'#'.repeat(level(heading.size))} ${heading.text}`);
    paragraph = '';
    heading = undefined;
  };
  for (const line of lines) {
    if (isHeading(line)) {
      // A heading that wraps onto a second line of the same size is one heading.
      if (heading && heading.size === line.size && previous === heading) {
        heading = { ...heading, text: `${heading.text} ${line.text}` };
      } else {
        flush();
        heading = line;
      }
      previous = heading;
      continue;
    }
    if (heading) flush();
    const gap = previous ? previous.y - line.y : 0;
    if (paragraph !== '' && (gap > line.size * PARAGRAPH_GAP || gap < 0)) flush();
    if (paragraph === '') paragraph = line.text;
    // A word hyphenated at the end of a line is joined again ("extrac-" + "tion").
    else if (/\p{L}-$/u.test(paragraph) && /^\p{Ll}/u.test(line.text)) paragraph = paragraph.slice(0, -1) + line.text;
    else paragraph += ` ${line.text}`;
    previous = line;
  }
  flush();
  return blocks;
}

function documentError(error: unknown): DocumentError {
  const name = (error as Error).name;
  if (name === 'PasswordException') return new DocumentError('The PDF is encrypted (password-protected): lore cannot read it. Upload a copy without a password.');
  if (name === 'InvalidPDFException' || name === 'FormatError') return new DocumentError(`The PDF is damaged and cannot be read: ${(error as Error).message}`);
  return new DocumentError(`The PDF cannot be read: ${(error as Error).message}`);
}

/**
 * A PDF's text, page by page, as Markdown. pdf.js gives each text item its font size but not its
 * weight (that needs the page's operator list, as costly as rendering it), so headings are told
 * by size alone: a line set at least HEADING_RATIO times the body text's size (the size most of
 * the document's characters have) becomes a heading, the largest such size level 1, the next
 * level 2, and so on (at most 6). A PDF of more than MAX_PAGES pages, or whose pages hold more than
 * MAX_CHARACTERS characters of text, fails with that bound as soon as it is known.
 */
export async function pdfToMarkdown(bytes: Uint8Array): Promise<PdfText> {
  let pdf;
  try {
    // pdf.js takes ownership of the buffer it is given; a copy keeps the caller's bytes usable.
    pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
  } catch (error) {
    throw documentError(error);
  }
  try {
    const info = (await pdf.getMetadata().catch(() => ({ info: {} }))).info as { Title?: unknown };
    if (pdf.numPages > MAX_PAGES) throw boundExceeded('pdf', `${MAX_PAGES} pages per file`, `it has ${pdf.numPages}`);
    const pages: Line[][] = [];
    let characters = 0;
    for (let number = 1; number <= pdf.numPages; number += 1) {
      const page = await pdf.getPage(number);
      const lines = pageLines((await page.getTextContent()).items);
      page.cleanup();
      characters += lines.reduce((sum, line) => sum + line.text.length, 0);
      if (characters > MAX_CHARACTERS) throw boundExceeded('pdf', `${MAX_CHARACTERS} characters of text per file`, `its first ${number} pages hold more`);
      pages.push(lines);
    }
    if (pages.every((lines) => lines.length === 0)) {
      throw new DocumentError('The PDF has no extractable text: it may be a scan or consist of images only (lore has no OCR).');
    }
    const body = bodySize(pages);
    const isHeading = (line: Line) => line.size >= body * HEADING_RATIO && line.text.length <= HEADING_MAX_CHARACTERS && /\p{L}/u.test(line.text);
    const headingSizes = [...new Set(pages.flat().filter(isHeading).map((line) => line.size))].sort((a, b) => b - a);
    const level = (size: number) => Math.min(headingSizes.indexOf(size) + 1, 6);
    let markdown = '';
    const pageStarts: number[] = [];
    for (const lines of pages) {
      const blocks = pageBlocks(lines, isHeading, level);
      if (markdown !== '' && blocks.length > 0) markdown += '\n\n';
      pageStarts.push(markdown.length);
      markdown += blocks.join('\n\n');
    }
    const title = typeof info.Title === 'string' && info.Title.trim() !== '' ? info.Title.replace(/\s+/g, ' ').trim() : null;
    return { markdown, pageStarts, title, pageCount: pdf.numPages };
  } catch (error) {
    throw error instanceof DocumentError ? error : documentError(error);
  } finally {
    await pdf.destroy();
  }
}
