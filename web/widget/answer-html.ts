/**
 * An answer's Markdown as HTML in which only the tags an answer may use are markup. Answers quote
 * manual pages, which are full of placeholders (`--jobs=<n>`, `<commit>`, `<file>`): read as HTML,
 * each is an element the sanitizer does not allow, and removing it took its text with it
 * (`--jobs=:`). So a tag in the answer's own HTML stays markup only when its name is allowed and,
 * unless it is a void element (`<br>`), its element is closed (`<b>bold</b>`): `a <b>c` is the text
 * of a page about placeholders, not the start of a bold run to the end. Everything else shows as
 * the text it is. A complete comment stays markup (hidden, as in any rendered Markdown).
 * Pure string work, so it is tested without a browser; the sanitizer (markdown.ts) runs after it.
 */
import { Lexer, Marked, type Token, type Tokens, type TokensList } from 'marked';

/**
 * The tags an answer may use: text, lists, code, quotes, tables and links. An allow-list rather
 * than DOMPurify's default, which keeps <img>, <svg>, <video>, <audio> and <picture>: anything that
 * loads from elsewhere would be fetched by every visitor's browser (a tracking pixel, a defaced
 * picture). Forms and styles could imitate the widget's own controls.
 */
export const ALLOWED_TAGS = [
  'a', 'abbr', 'b', 'blockquote', 'br', 'caption', 'code', 'dd', 'del', 'details', 'div', 'dl', 'dt', 'em',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'i', 'ins', 'kbd', 'li', 'mark', 'ol', 'p', 'pre', 'q', 's', 'samp', 'small',
  'span', 'strong', 'sub', 'summary', 'sup', 'table', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'u', 'ul', 'var',
];

/** Elements that load remote media, and what a link to their URL is called when they have no alt text. */
export const MEDIA: Record<string, string> = {
  img: 'image', picture: 'image', svg: 'image', image: 'image', video: 'video', audio: 'audio',
  iframe: 'embedded page', frame: 'embedded page', object: 'embedded content', embed: 'embedded content',
};

/** The names that are markup: the allowed tags, and the media the sanitizer turns into links. */
const MARKUP = new Set([...ALLOWED_TAGS, ...Object.keys(MEDIA)]);
/** Those of them that have no end tag (HTML's void elements; an `<image>` is parsed as an `<img>`). */
const VOID = new Set(['br', 'hr', 'img', 'image', 'embed', 'frame']);

// Raw HTML as CommonMark reads it (spec 0.31, 6.6): an open tag with its attributes, a closing tag,
// or a comment. What marked passes on as HTML is made of these and of text.
const ATTRIBUTE = String.raw`\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^\s"'=<>\x60]+|'[^']*'|"[^"]*"))?`;
const RAW_HTML = new RegExp(
  String.raw`<(?:(?<open>[A-Za-z][A-Za-z0-9-]*)(?:${ATTRIBUTE})*\s*\/?>|\/(?<close>[A-Za-z][A-Za-z0-9-]*)\s*>|!---?>|!--[\s\S]*?-->)`,
  'y',
);

/** A tag or comment of the answer's HTML; `markup` once it is known to stay one. */
type Tag = { text: string; name: string; closing: boolean; markup: boolean };
/** An HTML token of marked cut into its text and its tags. */
type Piece = string | Tag;

function piecesOf(html: string): Piece[] {
  const pieces: Piece[] = [];
  let start = 0;
  for (let at = html.indexOf('<'); at !== -1; at = html.indexOf('<', at + 1)) {
    RAW_HTML.lastIndex = at;
    const match = RAW_HTML.exec(html);
    if (!match) continue;
    if (at > start) pieces.push(html.slice(start, at));
    const name = (match.groups?.open ?? match.groups?.close)?.toLowerCase();
    // A comment has no name, and is markup whatever surrounds it.
    pieces.push({ text: match[0], name: name ?? '', closing: match.groups?.close !== undefined, markup: name === undefined });
    start = RAW_HTML.lastIndex;
    at = start - 1;
  }
  if (start < html.length) pieces.push(html.slice(start));
  return pieces;
}

/**
 * Marks the tags that stay markup: an allowed void tag; an allowed tag closed later in the answer
 * with its closing tag (each closing tag pairs with the nearest open one of its name); and
 * whatever a media element holds (a <picture>'s <source>, an <svg>'s shapes), which the
 * sanitizer removes with the element.
 */
function markTags(tags: Tag[]): void {
  const open = new Map<string, Tag[]>();
  for (const tag of tags) {
    if (!MARKUP.has(tag.name)) continue;
    if (VOID.has(tag.name)) {
      tag.markup = !tag.closing;
      continue;
    }
    const stack = open.get(tag.name) ?? [];
    open.set(tag.name, stack);
    if (!tag.closing) stack.push(tag);
    else {
      const opener = stack.pop();
      if (opener) opener.markup = tag.markup = true;
    }
  }
  let inMedia = 0;
  for (const tag of tags) {
    if (tag.name in MEDIA && !VOID.has(tag.name) && tag.markup) inMedia += tag.closing ? -1 : 1;
    else if (inMedia > 0) tag.markup = true;
  }
}

/** `<` as text. */
const asText = (html: string) => html.replaceAll('<', '&lt;');

function render(pieces: Piece[]): string {
  return pieces.map((piece) => (typeof piece === 'string' ? asText(piece) : piece.markup ? piece.text : asText(piece.text))).join('');
}

/** An HTML block whose start is text: a tag that does not stay markup, or a `<` that starts none. */
function startsAsText(pieces: Piece[]): boolean {
  const first = pieces.find((piece) => typeof piece !== 'string' || piece.trim() !== '');
  return first !== undefined && (typeof first === 'string' || !first.markup);
}

/**
 * An HTML block that starts as text, as Markdown: each of its lines that starts with a `<` of text
 * has that `<` escaped, so that none starts a block of HTML again (a run of 1,000 lines `<div>`
 * took 1.4 s when each turn of `answerHtml` freed one line).
 */
function asMarkdown(pieces: Piece[]): string {
  let source = '';
  const textAt = new Set<number>();
  for (const piece of pieces) {
    const text = typeof piece === 'string' ? piece : piece.text;
    if (typeof piece === 'string') for (let at = text.indexOf('<'); at !== -1; at = text.indexOf('<', at + 1)) textAt.add(source.length + at);
    else if (!piece.markup) textAt.add(source.length);
    source += text;
  }
  return source.replace(/(?<=^|\n)[ \t]{0,3}</g, (start, at: number) => (textAt.has(at + start.length - 1) ? `${start.slice(0, -1)}\\<` : start));
}

/**
 * The arrays of block tokens of a token tree: its own, a quote's, a list item's; whether their text
 * is in paragraphs (`top`): not in a tight list's items, where marked makes it `text` tokens.
 */
function blockArrays(tokens: Token[], top = true): { blocks: Token[]; top: boolean }[] {
  return [
    { blocks: tokens, top },
    ...tokens.flatMap((token) => {
      if (token.type === 'blockquote') return blockArrays((token as Tokens.Blockquote).tokens, true);
      if (token.type === 'list') return (token as Tokens.List).items.flatMap((item) => blockArrays(item.tokens, item.loose));
      return [];
    }),
  ];
}

const marked = new Marked({ gfm: true, breaks: true, async: false });

/** Blocks lexed from `markdown`, with the document's link definitions, at the top or in a list item. */
function lexBlocks(markdown: string, links: TokensList['links'], top: boolean): Token[] {
  const lexer = new Lexer(marked.defaults);
  Object.assign(lexer.tokens.links, links);
  lexer.state.top = top;
  return lexer.lex(markdown);
}

/** The answer's Markdown as HTML, its raw HTML reduced to the markup that stays (see above). */
export function answerHtml(markdown: string): string {
  const tokens = marked.lexer(markdown);
  for (;;) {
    const html = new Map<Tokens.HTML | Tokens.Tag, Piece[]>();
    marked.walkTokens(tokens, (token) => {
      if (token.type === 'html') html.set(token as Tokens.HTML, piecesOf(token.text));
    });
    markTags([...html.values()].flat().filter((piece): piece is Tag => typeof piece !== 'string'));
    // A block of HTML that starts as text was never HTML: it is Markdown again, its `<` as text (a
    // paragraph `<commit> is…`). The tags it holds may pair differently once it is Markdown (a
    // code span now holds one): the loop ends when no block starts so. Each turn takes a `<` out
    // of HTML for good, so it ends.
    let relexed = false;
    for (const { blocks, top } of blockArrays(tokens)) {
      for (let index = 0; index < blocks.length; index += 1) {
        const token = blocks[index]!;
        const pieces = token.type === 'html' ? html.get(token as Tokens.HTML) : undefined;
        if (!pieces || !(token as Tokens.HTML).block || !startsAsText(pieces)) continue;
        blocks.splice(index, 1, ...lexBlocks(asMarkdown(pieces), tokens.links, top));
        relexed = true;
      }
    }
    if (relexed) continue;
    for (const [token, pieces] of html) token.text = render(pieces);
    // After an inline <pre>, <code>, <kbd> or <script>, marked passes text on unescaped.
    marked.walkTokens(tokens, (token) => {
      if (token.type === 'text' && (token as Tokens.Text).escaped) token.text = asText(token.text);
    });
    return marked.parser(tokens);
  }
}
