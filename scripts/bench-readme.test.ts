/**
 * bench/README.md is where a newcomer learns how to run each benchmark: every `bench:*` script of
 * package.json must have its section there (`### npm run bench:…`, with what it measures, the
 * command and its JSON line) and its row in the table of benchmarks.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

const readme = readFileSync(new URL('../bench/README.md', import.meta.url), 'utf8');
const scripts = Object.keys((JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts);

test('bench/README.md has a section and a row for every bench:* script', () => {
  const benches = scripts.filter((name) => name.startsWith('bench:'));
  assert.ok(benches.length > 0);
  const sections = new Set([...readme.matchAll(/^### `npm run (bench:[\w-]+)`$/gm)].map(([, name]) => name!));
  const rows = new Set([...readme.matchAll(/^\| \[`(bench:[\w-]+)`\]/gm)].map(([, name]) => name!));
  assert.deepEqual(benches.filter((name) => !sections.has(name)), [], 'scripts without a section');
  assert.deepEqual(benches.filter((name) => !rows.has(name)), [], 'scripts without a row');
  assert.deepEqual([...sections].filter((name) => !benches.includes(name)), [], 'sections of no script');
});
