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
turndown.remove(['script', 'style', 'noscript', 'template', 'iframe', 'head']);
// Inline images (data: URIs) are often hundreds of KB of base64 that would be chunked and
// embedded as text; their alt text is all of them worth keeping.
turndown.addRule('inlineImage', {
  filter: (node) => node.nodeName === 'IMG' && (node.getAttribute('src') ?? '').trim().toLowerCase().startsWith('data:'),
  replacement: (_content, node) => (node as HTMLElement).getAttribute('alt')?.trim() ?? '',
});

// A `<` followed by a tag name, `/` or `!`: markup that was never entity-encoded.
const rawMarkup = /<[a-zA-Z/!]/;

/**
 * Entity-encoded HTML as content-hub exports it (`&lt;p&gt;...`) to Markdown. The text is
 * decoded exactly once, then parsed as HTML, whose parser decodes the entities of the HTML itself:
 * `&amp;nbsp;` is an encoded `&nbsp;` and ends as a space, `&amp;lt;` as a literal `<`. Text that
 * already contains tags was not encoded and is not decoded, so an encoded `&lt;script&gt;` inside
 * it stays text. Non-breaking spaces become plain spaces so keyword search matches across them.
 */
export function entityEncodedHtmlToMarkdown(data: string): string {
  const html = rawMarkup.test(data) ? data : he.decode(data);
  return turndown.turndown(html).replaceAll('\u00a0', ' ').trim();
}
