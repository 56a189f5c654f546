import { gfm } from '@joplin/turndown-plugin-gfm';
import he from 'he';
import TurndownService from 'turndown';

const turndown = new TurndownService({
  headingStyle: 'atx',
  codeBlockStyle: 'fenced',
  bulletListMarker: '-',
  hr: '---',
});
turndown.use(gfm);
// An underscore inside a word cannot open emphasis in CommonMark, so escaping it only litters
// identifiers (`cached\_property`): keyword search, answers quoting the text, and a reader
// copying a name all want `cached_property`.
const escapeMarkdown = turndown.escape.bind(turndown);
turndown.escape = (text: string) => escapeMarkdown(text).replace(/(?<=[\p{L}\p{N}])\\_(?=[\p{L}\p{N}])/gu, '_');
turndown.remove(['script', 'style', 'noscript', 'template', 'iframe', 'head']);
// Inline images (data: URIs) are often hundreds of KB of base64 that would be chunked and
// embedded as text; their alt text is all of them worth keeping.
turndown.addRule('inlineImage', {
  filter: (node) => node.nodeName === 'IMG' && (node.getAttribute('src') ?? '').trim().toLowerCase().startsWith('data:'),
  replacement: (_content, node) => (node as HTMLElement).getAttribute('alt')?.trim() ?? '',
});

// Documentation generators (Sphinx, DocBook, Javadoc) write code blocks as a bare <pre> with
// highlighting spans, no <code> inside: without this rule turndown escapes them as prose, so
// `n * f(n-1)` became `n \* f(n\-1)`, `>>>` became `\>>>`, and sentence splitting cut the code.
turndown.addRule('bareCodeBlock', {
  filter: (node) => node.nodeName === 'PRE' && node.firstElementChild?.nodeName !== 'CODE',
  replacement: (_content, node) => {
    const code = (node.textContent ?? '').replace(/\n+$/, '');
    const fence = code.includes('```') ? '~~~' : '```';
    return `\n\n${fence}\n${code}\n${fence}\n\n`;
  },
});

// A link within the page (`#section`) or to a relative path (another page of the same export)
// has no address a reader could follow: its text is kept, without the link. Link titles (Sphinx
// writes the whole summary of the target there) are dropped: they doubled the words of a
// sentence in the chunk, for keyword and vector search alike.
turndown.addRule('link', {
  filter: (node) => node.nodeName === 'A' && node.getAttribute('href') !== null,
  replacement: (content, node) => {
    const href = (node as HTMLElement).getAttribute('href')!.trim();
    if (!/^(https?:|mailto:)/i.test(href) || content.trim() === '') return content;
    return `[${content}](${href.replace(/[()]/g, (bracket) => encodeURIComponent(bracket))})`;
  },
});

// A definition term (`<dt>`) names what its description is about: a function's signature, a
// setting and its type, a glossary word. As a heading (level 5, 6 when nested in another list's
// description) it enters the heading path of every chunk of its description, so keyword and
// vector search see "maintenance_work_mem (integer)" beside "It defaults to 64 megabytes" even
// when the description runs over several chunks.
turndown.addRule('definitionTerm', {
  filter: 'dt',
  replacement: (content, node) => {
    let depth = 0;
    for (let parent = node.parentNode; parent; parent = parent.parentNode) if (parent.nodeName === 'DL') depth += 1;
    const text = content.replace(/\s+/g, ' ').trim();
    return text === '' ? '' : `\n\n${'#'.repeat(Math.min(6, 4 + depth))} ${text}\n\n`;
  },
});
turndown.addRule('definitionDescription', {
  filter: 'dd',
  replacement: (content) => `\n\n${content.trim()}\n\n`,
});

// A `<` followed by a tag name, `/` or `!`: markup that was never entity-encoded.
const rawMarkup = /<[a-zA-Z/!]/;

/**
 * Elements nested deeper than this are refused before conversion. Blink's HTML parser stops
 * nesting at 512 (kMaximumHTMLParserDOMTreeDepth): no page deeper renders as written. Past it the
 * cost grows with the depth squared (the parser walks the open elements at every tag: 10,000
 * levels took 3.5 s, 100,000 would take minutes) and turndown, which recurses, overflowed the
 * stack from 2,000 levels.
 */
export const HTML_MAX_DEPTH = 512;

/** HTML whose elements nest deeper than HTML_MAX_DEPTH: its message completes "the HTML could not be converted to Markdown: ". */
export class HtmlNestingError extends Error {
  constructor() {
    super(`its elements nest more than ${HTML_MAX_DEPTH} levels deep (the bound of nesting)`);
    this.name = 'HtmlNestingError';
  }
}

// Elements that never hold others (void), and those whose end tag may be left out (the parser
// closes them by itself): neither adds a level that lasts, so neither is counted.
const uncounted = new Set(
  'area base br col embed hr img input link meta param source track wbr p li dt dd tr td th thead tbody tfoot option optgroup colgroup caption rb rt rtc rp html head body'.split(' '),
);
// Their content is text, whatever it looks like.
const rawText = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'noscript', 'template', 'plaintext']);
/** A tag or a comment, in HTML or entity-encoded (content-hub's `&lt;p&gt;`, checked before the slower decoding: 1.6 s per MB of tags). */
const tags = {
  html: { pattern: /<(\/?)([a-zA-Z][\w:-]*)[^>]*?(\/?)>|<!--[\s\S]*?(?:-->|$)/g, lt: '<' },
  encoded: { pattern: /&lt;(\/?)([a-zA-Z][\w:-]*)[\s\S]*?(\/?)&gt;|&lt;!--[\s\S]*?(?:--&gt;|$)/g, lt: '&lt;' },
};

/**
 * Whether the elements of `html` nest deeper than HTML_MAX_DEPTH, told in one pass over its tags:
 * an end tag closes its element and any left open inside it, as the parser does; void and
 * optional-end elements and raw text are not counted. Linear in the length, so a hostile document
 * fails in milliseconds (100,000 levels in 1.1 MB: 5 ms) instead of in the parser.
 */
export function nestsDeeper(html: string, syntax: keyof typeof tags = 'html'): boolean {
  const { pattern, lt } = tags[syntax];
  const open: string[] = [];
  const lower = html.toLowerCase();
  pattern.lastIndex = 0;
  for (let match = pattern.exec(html); match; match = pattern.exec(html)) {
    const [, closing, rawName, selfClosing] = match;
    if (rawName === undefined) continue;
    const name = rawName.toLowerCase();
    if (uncounted.has(name)) continue;
    if (closing) {
      const at = open.lastIndexOf(name);
      if (at !== -1) open.length = at;
    } else if (rawText.has(name)) {
      const end = lower.indexOf(`${lt}/${name}`, pattern.lastIndex);
      pattern.lastIndex = end === -1 ? html.length : end;
    } else if (!selfClosing) {
      open.push(name);
      if (open.length > HTML_MAX_DEPTH) return true;
    }
  }
  return false;
}

/**
 * Entity-encoded HTML as content-hub exports it (`&lt;p&gt;...`) to Markdown. The text is
 * decoded exactly once, then parsed as HTML, whose parser decodes the entities of the HTML itself:
 * `&amp;nbsp;` is an encoded `&nbsp;` and ends as a space, `&amp;lt;` as a literal `<`. Text that
 * already contains tags was not encoded and is not decoded, so an encoded `&lt;script&gt;` inside
 * it stays text. Non-breaking spaces become plain spaces so keyword search matches across them.
 * Throws an HtmlNestingError for HTML nested deeper than HTML_MAX_DEPTH.
 */
export function entityEncodedHtmlToMarkdown(data: string): string {
  const raw = rawMarkup.test(data);
  if (nestsDeeper(data, raw ? 'html' : 'encoded')) throw new HtmlNestingError();
  const html = raw ? data : he.decode(data);
  return turndown.turndown(html).replaceAll('\u00a0', ' ').trim();
}
