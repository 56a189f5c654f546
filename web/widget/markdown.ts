/**
 * Answers are Markdown built from ingested content, which anyone who can feed a knowledge base
 * controls: they are parsed by marked (answer-html.ts: only the allowed tags stay markup, the rest
 * shows as text) and then sanitized by DOMPurify (no script, no event handlers, no javascript:
 * URLs, no remote media but the images of hosts the experience lists) before they reach the page.
 */
import DOMPurify from 'dompurify';
import { ALLOWED_TAGS, answerHtml, MEDIA } from './answer-html.ts';
import type { Source } from './api.ts';
import { imageAllowed } from './image-hosts.ts';

// No style (CSS url() loads), no background (a legacy attribute that loads an image), no ids or
// classes (they could collide with the widget's own).
const ALLOWED_ATTR = ['href', 'title', 'start', 'reversed', 'value', 'colspan', 'rowspan', 'align', 'scope', 'lang', 'dir', 'open'];
/** What an image of a listed host keeps (no srcset: its other URLs were not checked). */
const IMAGE_ATTR = ['src', 'alt'];

// Answers get an instance of their own: its hooks must not touch an action's SVG icon.
const purifier = DOMPurify(window);

/** The hosts whose images the answer being sanitized may show (sanitizing is synchronous). */
let imageHosts: readonly string[] = [];

// Links leave the host page: a new tab that cannot reach back through window.opener. A shown
// image tells its host nothing of the page (no Referer) and loads only when scrolled to.
purifier.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  } else if (node.tagName === 'IMG') {
    node.setAttribute('referrerpolicy', 'no-referrer');
    node.setAttribute('loading', 'lazy');
  }
});

// A media element becomes a link to what it would have loaded, labelled by its alt text (else
// "image (host)"), placed after it; the element itself is then removed as a tag not allowed. The
// sanitizer works in an inert document, where nothing loads. An <img> of a listed host stays.
purifier.addHook('uponSanitizeElement', (node, data) => {
  const kind = MEDIA[data.tagName];
  if (!kind || node.nodeType !== Node.ELEMENT_NODE || !node.parentNode) return;
  const element = node as Element;
  if (data.tagName === 'img' && imageAllowed(element.getAttribute('src'), imageHosts)) return;
  const url = safeUrl(['src', 'data', 'href', 'poster'].map((name) => element.getAttribute(name)).find(Boolean));
  const alt = (element.getAttribute('alt') ?? element.getAttribute('title') ?? '').trim();
  const label = alt || (url ? `${kind} (${new URL(url).host})` : '');
  if (label) {
    let replacement: Node = element.ownerDocument.createTextNode(label);
    if (url) {
      const link = element.ownerDocument.createElement('a');
      link.setAttribute('href', url);
      link.append(replacement);
      replacement = link;
    }
    node.parentNode.insertBefore(replacement, node.nextSibling);
  }
  // <img> is an allowed tag when the experience lists image hosts: this one is not of them.
  if (data.tagName === 'img') node.parentNode.removeChild(node);
});

const sanitizeOptions = { ALLOWED_TAGS: ['#text', ...ALLOWED_TAGS], ALLOWED_ATTR, ALLOW_DATA_ATTR: false };
const withImages = { ...sanitizeOptions, ALLOWED_TAGS: [...sanitizeOptions.ALLOWED_TAGS, 'img'], ALLOWED_ATTR: [...ALLOWED_ATTR, ...IMAGE_ATTR] };

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

// A citation `[n]`, not the text of a Markdown link `[n](…)` or a reference definition (`[n]:`
// opening a line, after at most three spaces). Adjacent citations `[1][2]`, as the service's
// prompt asks for, and a citation before a colon mid-sentence are citations, as the service counts them.
const CITATION = /\[(\d+)\](?!\()(?!(?<=^ {0,3}\[\d+\]):)/gm;

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

/** An answer's Markdown as sanitized HTML, with the https images of `hosts` shown (else links). */
export function renderMarkdown(text: string, sources: Source[], hosts: readonly string[] = []): string {
  const html = answerHtml(linkCitations(text, sources));
  imageHosts = hosts;
  try {
    return purifier.sanitize(html, hosts.length > 0 ? withImages : sanitizeOptions);
  } finally {
    imageHosts = [];
  }
}

/** An action's SVG icon, sanitized like an answer. */
export function sanitizeSvg(svg: string): string {
  return DOMPurify.sanitize(svg, { USE_PROFILES: { svg: true } });
}
