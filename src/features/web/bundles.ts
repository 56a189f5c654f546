import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppError } from '../../core/errors.ts';
import type { App } from '../../core/http/app-types.ts';
import { responses } from '../../core/http/schemas.ts';

/** Where `npm run build` (scripts/build-web.js) writes the browser bundles. */
const bundleDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'dist', 'web');

/**
 * Bundles are revalidated every five minutes: short enough that a new release reaches the sites
 * embedding the widget the same day, and a revalidation is a 304 of a few hundred bytes thanks
 * to the ETag.
 */
const CACHE_CONTROL = 'public, max-age=300, must-revalidate';

type LoadedBundle = { body: Buffer; etag: string; mtimeMs: number; size: number };
const loaded = new Map<string, LoadedBundle>();

/**
 * Reads `dist/web/<name>.js`, hashing it once per build: a rebuild (new mtime or size) is picked
 * up without restarting the server. A bundle that was never built is a 503 naming the fix.
 */
export async function loadBundle(name: string): Promise<LoadedBundle> {
  const file = join(bundleDir, `${name}.js`);
  let info;
  try {
    info = await stat(file);
  } catch {
    throw new AppError('SERVICE_UNAVAILABLE', `The ${name} bundle is not built; run \`npm run build\`.`);
  }
  const cached = loaded.get(name);
  if (cached && cached.mtimeMs === info.mtimeMs && cached.size === info.size) return cached;
  const body = await readFile(file);
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  const bundle = { body, etag, mtimeMs: info.mtimeMs, size: info.size };
  loaded.set(name, bundle);
  return bundle;
}

/** True when an `If-None-Match` header names this ETag (or `*`). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed === etag || trimmed === `W/${etag}`;
  });
}

/** `GET /<name>.js`: the bundle built from `web/<name>/main.ts(x)`, with ETag and Cache-Control. */
export function serveBundle(app: App, name: string): void {
  app.get(
    `/${name}.js`,
    { schema: { tags: ['web'], summary: `The ${name} script (built by npm run build)`, response: responses({}, [503]) } },
    async (request, reply) => {
      const bundle = await loadBundle(name);
      void reply
        .header('etag', bundle.etag)
        .header('cache-control', CACHE_CONTROL)
        .header('x-content-type-options', 'nosniff')
        // Embedded by other sites' pages, including those that isolate themselves (COEP: require-corp).
        .header('cross-origin-resource-policy', 'cross-origin');
      if (matches(request.headers['if-none-match'], bundle.etag)) return reply.code(304).send();
      return reply.type('text/javascript; charset=utf-8').send(bundle.body);
    },
  );
}

/** Escapes text for HTML content and double-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

export type PageOptions = {
  /** The document title. */
  title: string;
  /** The bundle the page runs (`/<bundle>.js`), also served by this call. */
  bundle: string;
};

/**
 * `GET <path>`: a single-page app's HTML shell, an empty `<div id="app">` and its bundle's script
 * (also registered, as `GET /<bundle>.js`). The shell is never cached, so a release's new bundle
 * is the one loaded; like the bundle, it is a 503 until `npm run build` ran.
 */
export function servePage(app: App, path: string, options: PageOptions): void {
  serveBundle(app, options.bundle);
  app.get(path, { schema: { tags: ['web'], summary: options.title, response: responses({}, [503]) } }, async (_request, reply) => {
    await loadBundle(options.bundle);
    void reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8');
    return htmlDocument(options.title, `<div id="app"></div>\n<script src="/${escapeHtml(options.bundle)}.js"></script>`);
  });
}

/** A minimal HTML5 document around `body` (already HTML). */
export function htmlDocument(title: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${escapeHtml(title)}</title>
${head}</head>
<body>
${body}
</body>
</html>
`;
}
