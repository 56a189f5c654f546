// The names the reference pages give: every repository path and every table, function and trigger
// they name must exist, so a page cannot go on describing a module that moved or a table that was
// dropped (issue 36: migration 007 cited `keyword-ranking.ts` long after it became `bm25.ts`).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/** The folders a rooted path in a page starts with; such a path must exist as written. */
const ROOTS = ['src', 'test', 'scripts', 'migrations', 'web', 'bench', 'docs', 'bin', 'samples', '.ci'];
const SKIPPED_DIRS = new Set(['node_modules', '.git', 'dist']);
// A name with one of these is a placeholder (`migrations/NNN_name.sql`, `src/features/<feature>/`,
// `src/features/…`) or a glob, not a path.
const PLACEHOLDER = /[…*<>{}$]|NNN|\.\.\.$/;
// A rooted name is checked when it is a folder or a file of these kinds; other names under a root are
// examples of a user's files (`docs/feed.xml` in a folder `lore ingest` walks).
const ROOTED_FILE = /(?:\/|\/[^/.]+|\.(?:ts|js|mjs|cjs|sql|md|json|sh|css|html|yml))$/;
// An unrooted name is checked when it is a module or a migration: other file names in the pages are
// runtime files (`DATA_DIR/secrets.json`), bundles served at a URL (`widget.js`) or examples.
const MODULE = /\.(?:ts|sql)$/;

/** The pages checked: docs/*.md (not docs/history/, which describes what was), README.md and bench/README.md. */
export function docPages(root) {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', 'bench/README.md', ...docs.sort()].filter((page) => existsSync(join(root, page)));
}

/** Every file and folder of the repository (relative, with `/`), without dependencies and build output. */
export function repositoryPaths(root) {
  const paths = new Set();
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      if (SKIPPED_DIRS.has(entry.name)) continue;
      const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
      paths.add(path);
      if (entry.isDirectory()) walk(path);
    }
  };
  walk('');
  return paths;
}

const SCHEMA_OBJECT = /\bCREATE\s+(?:OR\s+REPLACE\s+)?(TABLE|FUNCTION|TRIGGER)\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z0-9_]*)/gi;

/**
 * The tables, functions and triggers the schema has: those the migrations create, and the few the
 * code creates itself (`schema_migrations` in migrate.ts, PGlite's vector log in pglite-vectors.ts),
 * found by the same `CREATE` pattern in every .sql and non-test .ts file under migrations/ and src/core/db/.
 */
export function schemaNames(root) {
  const names = { table: new Set(), function: new Set(), trigger: new Set() };
  for (const dir of ['migrations', 'src/core/db']) {
    if (!existsSync(join(root, dir))) continue;
    for (const file of readdirSync(join(root, dir))) {
      if (!/\.(?:sql|ts)$/.test(file) || file.endsWith('.test.ts')) continue;
      for (const [, kind, name] of readFileSync(join(root, dir, file), 'utf8').matchAll(SCHEMA_OBJECT)) {
        names[kind.toLowerCase()].add(name.toLowerCase());
      }
    }
  }
  return names;
}

// A run of backticked names joined by commas, "and" or "or": "`chunks`, `entries` and `keyword_postings`".
const NAME_RUN = /`[a-z_][a-z0-9_]*(?:\(\))?`(?:(?:,\s*|,?\s+(?:and|or)\s+)`[a-z_][a-z0-9_]*(?:\(\))?`)*/g;
// The words that make a backticked name a schema object's, before it ("the table `x`", "UPDATE of
// `x`") or after it ("the `x` table", "one `x` row per endpoint").
const KIND_WORDS = {
  table: { before: /\b(?:tables?|INSERT(?: INTO)?|UPDATE(?: of)?|DELETE FROM|JOIN|VACUUM|ANALYZE)\s+$/, after: /^\s+(?:tables?|rows?)\b/i },
  function: { before: /\bfunctions?\s+$/i, after: /^\s+functions?\b/i },
  trigger: { before: /\btriggers?\s+$/i, after: /^\s+triggers?\b/i },
};

/**
 * The schema objects a text names as such: a run of backticked lower-case identifiers directly
 * after or before one of KIND_WORDS ("the tables `entries` and `chunks`", "the `keyword_totals`
 * table", "`chunks_keyword_insert` and `chunks_keyword_update` triggers", "UPDATE of
 * `ingestion_jobs`"). A bare backticked identifier is not taken for one: columns, settings and
 * PostgreSQL's own functions share the shape.
 */
export function namedSchemaObjects(text) {
  const named = [];
  for (const match of text.matchAll(NAME_RUN)) {
    const before = text.slice(Math.max(0, match.index - 16), match.index).replace(/\s+/g, ' ');
    const after = text.slice(match.index + match[0].length, match.index + match[0].length + 16).replace(/\s+/g, ' ');
    for (const [kind, words] of Object.entries(KIND_WORDS)) {
      if (!words.before.test(before) && !words.after.test(after)) continue;
      for (const [, name] of match[0].matchAll(/`([a-z_][a-z0-9_]*)(?:\(\))?`/g)) named.push({ kind, name, index: match.index });
    }
  }
  return named;
}

/**
 * The repository paths a page names: each word of a backticked span or fenced block that starts
 * with one of ROOTS and a slash and names a folder or a source file (checked from the repository's
 * root); each module or migration named without its root, in a backticked span (`bm25.ts`,
 * `core/text/sentences.ts`) or, with a folder, in a fenced block; and each relative link target
 * (from the page's folder).
 */
export function namedPaths(page, text) {
  const named = [];
  const add = (name, index, from, anchor) => {
    const cleaned = name.replace(/^[("'[]+|[)"',.;:\]]+$/g, '').replace(/#.*$/, '').replace(/:\d+(?:-\d+)?$/, '');
    if (cleaned === '' || PLACEHOLDER.test(cleaned) || /^[a-z]+:\/\//i.test(cleaned)) return;
    named.push({ name: cleaned, index, from, ...(anchor ? { anchor } : {}) });
  };
  const code = /```[^\n]*\n[\s\S]*?```|`[^`\n]+`/g;
  for (const match of text.matchAll(code)) {
    for (const word of match[0].replace(/^```[^\n]*|```$|`/g, (fence) => ' '.repeat(fence.length)).matchAll(/\S+/g)) {
      const token = word[0].replace(/^[("'[]+|[)"',.;:\]]+$/g, '');
      const bare = token.replace(/#.*$/, '').replace(/:\d+(?:-\d+)?$/, '');
      if (ROOTS.some((root) => bare.startsWith(`${root}/`))) {
        if (ROOTED_FILE.test(bare)) add(token, match.index + word.index, 'root');
      } else if (MODULE.test(bare) && /^[\w.-][\w./-]*$/.test(bare) && (bare.includes('/') || !match[0].startsWith('```'))) {
        add(token, match.index + word.index, 'anywhere');
      }
    }
  }
  const prose = text.replace(code, (block) => ' '.repeat(block.length));
  for (const match of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^(?:[a-z]+:|mailto:)/i.test(match[1])) continue;
    const [target, anchor] = match[1].split('#');
    add(target === '' ? page : join(dirname(page), target), match.index, 'link', anchor);
  }
  return named;
}

/**
 * The anchors of a Markdown page's headings, as GitHub makes them: lower case, markup and
 * punctuation dropped, spaces as hyphens, a repeated heading numbered from -1.
 */
export function headingAnchors(text) {
  const anchors = new Set();
  const withoutCode = text.replace(/```[\s\S]*?```/g, '');
  for (const [, heading] of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    let anchor = base;
    for (let repeat = 1; anchors.has(anchor); repeat += 1) anchor = `${base}-${repeat}`;
    anchors.add(anchor);
  }
  return anchors;
}

const lineOf = (text, index) => text.slice(0, index).split('\n').length;

/**
 * What is wrong with the names of one page: each as `page:line: why`. A rooted path or link must
 * exist as written (a trailing slash names a folder), and a link's `#anchor` into a page must be one
 * of its headings; an unrooted name must be the end of some path (`core/text/sentences.ts` of
 * src/core/text/sentences.ts, `bm25.ts` of its folder's file).
 */
export function wrongNames(root, page, { paths = repositoryPaths(root), schema = schemaNames(root) } = {}) {
  const text = readFileSync(join(root, page), 'utf8');
  const problems = [];
  for (const { name, index, from, anchor } of namedPaths(page, text)) {
    const path = normalize(name).replace(/\/$/, '');
    if (from === 'anywhere') {
      const ends = [...paths].some((known) => known === path || known.endsWith(`/${path}`));
      const besidePage = paths.has(normalize(join(dirname(page), path)));
      if (!ends && !besidePage) problems.push(`${page}:${lineOf(text, index)}: no file ends in ${name}`);
    } else if (!paths.has(path) || relative('.', path).startsWith('..')) {
      problems.push(`${page}:${lineOf(text, index)}: no ${name} in the repository`);
    } else if (anchor !== undefined && path.endsWith('.md') && !headingAnchors(readFileSync(join(root, path), 'utf8')).has(anchor)) {
      problems.push(`${page}:${lineOf(text, index)}: no heading #${anchor} in ${path}`);
    }
  }
  for (const { kind, name, index } of namedSchemaObjects(text)) {
    if (!schema[kind].has(name)) problems.push(`${page}:${lineOf(text, index)}: the migrations create no ${kind} ${name}`);
  }
  const line = (problem) => Number(problem.slice(page.length + 1).split(':')[0]);
  return problems.sort((a, b) => line(a) - line(b));
}

/** What is wrong with every page's names. */
export function wrongDocNames(root) {
  const context = { paths: repositoryPaths(root), schema: schemaNames(root) };
  return docPages(root).flatMap((page) => wrongNames(root, page, context));
}
