/**
 * Answers are Markdown built from ingested content, which anyone who can feed a knowledge base
 * controls: they are parsed by marked and then sanitized by DOMPurify (no script, no event
 * handlers, no javascript: URLs) before they reach the page.
 */
import DOMPurify from 'dompurify';
import { Marked } from 'marked';
import type { Source } from './api.ts';

const marked = new Marked({ gfm: true, breaks: true, async: false });

// Links leave the host page: a new tab that cannot reach back through window.opener.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

const sanitizeOptions = {
  // Forms and styles could imitate the widget's own controls; ids and classes could collide with them.
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select'],
  FORBID_ATTR: ['style', 'class', 'id'],
};

/** The URL when it is an http(s) URL, else undefined (no javascript:, data: or relative links). */
export function safeUrl(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

// A citation `[n]`, not the text of a Markdown link `[n](…)` or a reference definition `[n]:`.
const CITATION = /\[(\d+)\](?![([:])/g;

/** The source numbers an answer cites with `[n]`. */
export function citedNumbers(text: string): Set<number> {
  return new Set(Array.from(text.matchAll(CITATION), (match) => Number(match[1])));
}

/** Turns the citations `[n]` of an answer into links to source n, when it has a URL. */
function linkCitations(text: string, sources: Source[]): string {
  return text.replace(CITATION, (citation, number: string) => {
    const href = safeUrl(sources.find((source) => source.number === Number(number))?.url);
    return href ? `[\\[${number}\\]](<${href}>)` : citation;
  });
}

/** An answer's Markdown as sanitized HTML. */
export function renderMarkdown(text: string, sources: Source[]): string {
  const html = marked.parse(linkCitations(text, sources)) as string;
  return DOMPurify.sanitize(html, sanitizeOptions);
}

/** An action's SVG icon, sanitized like an answer. */
export function sanitizeSvg(svg: string): string {
  return DOMPurify.sanitize(svg, { USE_PROFILES: { svg: true } });
}
