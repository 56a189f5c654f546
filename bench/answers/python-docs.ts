/**
 * The corpus of `bench:answers`: the Python 3.11 documentation as Debian ships it
 * (`apt-get install python3.11-doc`, read in /usr/share/doc/python3.11/html, never copied into the
 * repository), turned into a content-hub export as a help-center CMS would produce it: each page's
 * main content as entity-encoded HTML, with `Title`, `url` and `keywords` attributes.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import he from 'he';

export const DEFAULT_DOCS_DIR = '/usr/share/doc/python3.11/html';
const PUBLIC_BASE = 'https://docs.python.org/3.11/';

// Pages that are navigation, not documentation: indexes, search, the table of contents, legal
// pages, and the changelog (one 1 MB page of issue numbers).
const SKIPPED = /^(genindex.*|search|contents|py-modindex|index|about|bugs|copyright|license|download|glossary-index|whatsnew\/changelog)\.html$/;

/** One documentation page: its id is its path under the HTML directory (`library/functools.html`). */
export type DocPage = { id: string; title: string; url: string; section: string; html: string };

async function htmlFiles(dir: string, root: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('_')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await htmlFiles(path, root)));
    else if (entry.name.endsWith('.html') && !SKIPPED.test(relative(root, path))) found.push(path);
  }
  return found;
}

/**
 * The article of a Sphinx page: the `role="main"` body up to the sidebar, without the `¶`
 * permalinks Sphinx puts beside every heading. Undefined for a page without one.
 */
export function mainContent(html: string): string | undefined {
  const start = html.indexOf('<div class="body" role="main">');
  if (start < 0) return undefined;
  const end = html.indexOf('<div class="sphinxsidebar"', start);
  return html
    .slice(start, end < 0 ? undefined : end)
    .replace(/<a class="headerlink"[^>]*>[^<]*<\/a>/g, '')
    .trim();
}

/** The page's title without Sphinx's " — Python 3.11.x documentation" suffix. */
function titleOf(html: string, fallback: string): string {
  const raw = /<title>([\s\S]*?)<\/title>/.exec(html)?.[1] ?? fallback;
  return he.decode(raw).replace(/\s+[—-]\s+Python [\d.]+ documentation\s*$/, '').trim();
}

/** Every documentation page of the HTML directory, in path order. */
export async function readDocPages(root = DEFAULT_DOCS_DIR): Promise<DocPage[]> {
  const pages: DocPage[] = [];
  for (const path of (await htmlFiles(root, root)).sort()) {
    const id = relative(root, path);
    const html = await readFile(path, 'utf8');
    const content = mainContent(html);
    if (!content) continue;
    pages.push({ id, title: titleOf(html, id), url: PUBLIC_BASE + id, section: id.includes('/') ? id.split('/')[0]! : 'general', html: content });
  }
  return pages;
}

const attribute = (key: string, value: string) => ({ key, value: { type: 'STRING', stringValue: value } });

/** A content-hub export of pages: `[items, {timeTaken}]`, the HTML entity-encoded as such exports carry it. */
export function contentHubExport(pages: DocPage[]): [unknown[], { timeTaken: string }] {
  const items = pages.map((page) => ({
    content: {
      documentIdentifier: page.id,
      parseImage: false,
      deleted: false,
      inlineContent: { type: 'TEXT', textContent: { data: he.escape(page.html) } },
    },
    metadata: { inlineAttributes: [attribute('Title', page.title), attribute('url', page.url), attribute('keywords', `python, ${page.section}`)] },
  }));
  return [items, { timeTaken: '0ms' }];
}
