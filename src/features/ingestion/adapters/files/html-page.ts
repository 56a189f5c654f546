import he from 'he';
import { entityEncodedHtmlToMarkdown } from '../html-to-markdown.ts';

// Page furniture, not content: navigation, sidebars and footers repeat on every page of a site
// and would make every page's chunks match the same searches.
const furniture = /<(nav|aside|footer)(?=[\s>])[^>]*>[\s\S]*?<\/\1\s*>/gi;
const titleElement = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i;

/** The part of a page between the first opening and the last closing tag of `tag`, if it has one. */
function element(html: string, tag: string): string | undefined {
  const open = new RegExp(`<${tag}(?=[\\s>])[^>]*>`, 'i').exec(html);
  const close = html.toLowerCase().lastIndexOf(`</${tag}`);
  return open && close > open.index ? html.slice(open.index + open[0].length, close) : undefined;
}

/**
 * An HTML file as Markdown: its main content (the `<main>` element, else the `<article>`, else
 * the whole page without its `<nav>`, `<aside>` and `<footer>` elements), converted like
 * content-hub's HTML; and the page's `<title>`.
 */
export function htmlPageToMarkdown(html: string): { markdown: string; title: string | null } {
  const title = titleElement.exec(html)?.[1];
  const main = element(html, 'main') ?? element(html, 'article') ?? html;
  return {
    markdown: entityEncodedHtmlToMarkdown(main.replace(furniture, '')),
    title: title === undefined ? null : he.decode(title).replace(/\s+/g, ' ').trim() || null,
  };
}
