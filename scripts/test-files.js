// The test files, and what the runner reads from their sources through their relative imports.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** Every *.test.ts file under `dirs`, sorted. */
export function testFiles(dirs) {
  return dirs
    .flatMap((dir) =>
      readdirSync(dir, { withFileTypes: true, recursive: true })
        .filter((entry) => entry.isFile() && entry.name.endsWith('.test.ts'))
        .map((entry) => join(entry.parentPath ?? entry.path, entry.name)),
    )
    .sort();
}

// Static and dynamic imports of a relative module: `from './x.ts'`, `import './x.ts'`, `import('./x.ts')`.
const RELATIVE_IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

// Each module's source, read once: the test files share most of their imports, and walking each
// file's graph anew opened 7,575 files for the runner's two questions.
const sources = new Map();
function sourceOf(path) {
  if (!sources.has(path)) sources.set(path, existsSync(path) ? readFileSync(path, 'utf8') : undefined);
  return sources.get(path);
}

/** Whether `test(path, source)` holds for `file` or a module it imports, directly or not. */
function reaches(file, test, seen = new Set()) {
  const path = resolve(file);
  const source = sourceOf(path);
  if (seen.has(path) || source === undefined) return false;
  seen.add(path);
  if (test(path, source)) return true;
  return [...source.matchAll(RELATIVE_IMPORT)].some(([, specifier]) => reaches(resolve(dirname(path), specifier), test, seen));
}

/** Whether a test file drives Chromium (test/browser.ts), itself or through a module it imports. */
export function drivesBrowser(file) {
  return reaches(file, (path) => path.endsWith('/test/browser.ts'));
}

/** Whether a test file starts `lore` processes (test/lore-process.ts), itself or through a module it imports. */
export function startsLoreProcesses(file) {
  return reaches(file, (path) => path.endsWith('/test/lore-process.ts'));
}

/**
 * Whether a test file cannot tell the engines apart, and so runs on one engine only. A test learns
 * which engine a pass is for only from LORE_TEST_ENGINE and TEST_DATABASE_URL (test/harness.ts
 * reads them; scripts/run-tests.js removes DATABASE_URL). A file that reads neither, itself or
 * through any module it imports, runs the very same code on every pass: the encoders, the
 * chunkers, PGlite's own tests. Each pass of such a file after the first repeats work: 128 s of
 * the PostgreSQL pass's test time on 2026-11-29, 67 s of it the builtin encoder's.
 *
 * A file that drives Chromium is blind too, though its server runs on the engine of the run: its
 * subject is the page, which gets the same HTML, bundles and JSON from either engine, and what the
 * engine does behind each route is the API tests' subject, on both engines. The rule is one of
 * imports rather than a mark in each file, so that a new page test needs no bookkeeping; a page
 * test that did depend on the engine would have to say so here. The 12 page tests this rule adds
 * took 451 s of the PostgreSQL pass's 1,532 s of file time in CI on 2026-12-02 (a loaded machine).
 */
export function engineBlind(file) {
  return drivesBrowser(file) || marksOneEngine(file) || !reaches(file, (_path, source) => /\b(?:LORE_TEST_ENGINE|TEST_DATABASE_URL)\b/.test(source));
}

/**
 * Whether a test file says, on a line of its own starting `// Runs on one engine:`, why it
 * cannot tell the engines apart though its server runs on the engine of the run: `lore ingest`'s
 * tests, whose subject is the client (97 s of a 988 s CI run on the PostgreSQL engine, 2026-12-02),
 * while what the server does with the jobs is the ingestion tests' subject, on both engines.
 */
export function marksOneEngine(file) {
  return /^\/\/ Runs on one engine: /m.test(sourceOf(resolve(file)) ?? '');
}

/**
 * The one engine a test file can run on, when its every test sits inside one top-level guard
 * (`if (engine === 'pglite') {` to the file's last line, and no test or suite at the top level):
 * the chaos suites, PGlite's own tests, the full disk, PostgreSQL's refusals. On the other engine such a file only
 * started a process, imported the app and defined nothing (5-13 s each, 2026-12-02). Undefined for
 * any other file.
 */
export function guardedEngine(file) {
  const source = sourceOf(resolve(file)) ?? '';
  const guard = /^if \(engine === '(pglite|postgres)'\) \{$/m.exec(source);
  if (!guard || !/\n\}\n*$/.test(source) || /^(?:describe|test|it)\(/m.test(source)) return undefined;
  return guard[1];
}

/**
 * The files in the order they should start, the longest first: the whole-system suites of test/
 * that start lore processes (the chaos and crash suites, the first start: 76-290 s each on a
 * loaded machine on 2026-12-02), then the other files that start lore processes or drive Chromium
 * (7-111 s), then the others (1-5 s for most), each group in name order. In name order the
 * longest started last, and a run ended with them running on one core of two.
 */
export function longestFirst(files) {
  const suite = (file) => /(?:^|\/)test\/[^/]+$/.test(file) && startsLoreProcesses(file);
  const long = (file) => startsLoreProcesses(file) || drivesBrowser(file);
  return [...files.filter(suite), ...files.filter((file) => long(file) && !suite(file)), ...files.filter((file) => !long(file))];
}
