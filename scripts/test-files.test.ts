/**
 * What the test runner reads from the test files' sources (test-files.js): which files cannot tell
 * the engines apart, and so run on one engine only, which start lore processes, and which start
 * first. A file taken for blind by mistake would silently skip the PostgreSQL engine, hence the
 * checks on the real tree too.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { drivesBrowser, engineBlind, guardedEngine, longestFirst, marksOneEngine, startsLoreProcesses, testFiles } from './test-files.js';

describe('the test files the runner reads', () => {
  let dir: string;
  const file = (name: string) => join(dir, name);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lore-test-files-'));
    await mkdir(join(dir, 'test'));
    const sources: Record<string, string> = {
      'test/harness.ts': "export const engine = process.env.LORE_TEST_ENGINE ?? 'pglite';\n",
      'test/lore-process.ts': "import { spawn } from 'node:child_process';\nexport const start = spawn;\n",
      'helper.ts': "import { engine } from './test/harness.ts';\nexport const which = engine;\n",
      'cycle-a.ts': "import { b } from './cycle-b.ts';\nexport const a = b;\n",
      'cycle-b.ts': "import { a } from './cycle-a.ts';\nexport const b = 1;\nexport { a };\n",
      'unit.test.ts': "import { test } from 'node:test';\nimport { a } from './cycle-a.ts';\ntest('a', () => a);\n",
      'through-helper.test.ts': "import { test } from 'node:test';\nimport { which } from './helper.ts';\ntest('b', () => which);\n",
      'dynamic.test.ts': "import { test } from 'node:test';\ntest('c', async () => (await import('./helper.ts')).which);\n",
      'server-url.test.ts': "import { test } from 'node:test';\ntest('d', () => process.env.TEST_DATABASE_URL);\n",
      'processes.test.ts': "import { test } from 'node:test';\nimport { start } from './test/lore-process.ts';\ntest('e', () => start);\n",
      'test/browser.ts': "import { chromium } from 'playwright-core';\nexport const launch = () => chromium.launch();\n",
      'client.test.ts': "// Runs on one engine: the subject is a client.\nimport { test } from 'node:test';\nimport { which } from './helper.ts';\ntest('g', () => which);\n",
      'guarded.test.ts': "import { test } from 'node:test';\nimport { engine } from './test/harness.ts';\n\nif (engine === 'postgres') {\n  test('h', () => engine);\n}\n",
      'half-guarded.test.ts': "import { test } from 'node:test';\nimport { engine } from './test/harness.ts';\n\nif (engine === 'postgres') {\n  test('i', () => engine);\n}\ntest('j', () => engine);\n",
      'browser.test.ts': "import { test } from 'node:test';\nimport { launch } from './test/browser.ts';\nimport { which } from './helper.ts';\ntest('f', () => [launch, which]);\n",
    };
    for (const [name, source] of Object.entries(sources)) await writeFile(file(name), source);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('a file that reads neither LORE_TEST_ENGINE nor TEST_DATABASE_URL, through any import, is engine-blind', () => {
    assert.equal(engineBlind(file('unit.test.ts')), true);
    assert.equal(engineBlind(file('processes.test.ts')), true);
  });

  test('a file that drives Chromium is engine-blind, though its server runs on the engine of the run', () => {
    assert.equal(drivesBrowser(file('browser.test.ts')), true);
    assert.equal(engineBlind(file('browser.test.ts')), true);
    assert.equal(drivesBrowser(file('through-helper.test.ts')), false);
  });

  test('a file that says it runs on one engine is engine-blind; a file whose every test is inside one engine\'s guard runs on that engine only', () => {
    assert.equal(marksOneEngine(file('client.test.ts')), true);
    assert.equal(engineBlind(file('client.test.ts')), true);
    assert.equal(marksOneEngine(file('through-helper.test.ts')), false);
    assert.equal(guardedEngine(file('guarded.test.ts')), 'postgres');
    assert.equal(guardedEngine(file('half-guarded.test.ts')), undefined, 'a test outside the guard runs on every engine');
    assert.equal(guardedEngine(file('through-helper.test.ts')), undefined);
  });

  test('a file that starts lore processes, itself or through an import, goes to the lore processes\' lane', () => {
    assert.deepEqual(testFiles([dir]).filter(startsLoreProcesses).map((path) => path.slice(dir.length + 1)), ['processes.test.ts']);
  });

  test('a file that reads them itself, or through a static or dynamic import of any depth, is not', () => {
    assert.equal(engineBlind(file('server-url.test.ts')), false);
    assert.equal(engineBlind(file('through-helper.test.ts')), false);
    assert.equal(engineBlind(file('dynamic.test.ts')), false);
  });

  test('the suites of test/ that start lore processes come first, then the files that start them or drive Chromium, then the others, each in name order', () => {
    const files = testFiles([dir]);
    assert.deepEqual(
      files.map((path) => path.slice(dir.length + 1)),
      ['browser.test.ts', 'client.test.ts', 'dynamic.test.ts', 'guarded.test.ts', 'half-guarded.test.ts', 'processes.test.ts', 'server-url.test.ts', 'through-helper.test.ts', 'unit.test.ts'],
    );
    assert.deepEqual(
      longestFirst(files).map((path) => path.slice(dir.length + 1)),
      ['browser.test.ts', 'processes.test.ts', 'client.test.ts', 'dynamic.test.ts', 'guarded.test.ts', 'half-guarded.test.ts', 'server-url.test.ts', 'through-helper.test.ts', 'unit.test.ts'],
    );
    const real = longestFirst(testFiles(['src', 'test', 'web', 'scripts']));
    assert.deepEqual(real.slice(0, 5), ['test/chaos-embedded.test.ts', 'test/chaos-postgres.test.ts', 'test/crash-recovery.test.ts', 'test/first-start.test.ts', 'test/webhooks-crash.test.ts']);
  });

  test('in this repository, every file that uses the harness runs on both engines, but the page tests, lore ingest\'s and the guarded ones', () => {
    const files = testFiles(['src', 'test', 'web', 'scripts']);
    assert.equal(engineBlind('test/harness.ts'), false, 'the harness no longer reads the engine the runner names');
    const usesHarness = files.filter((path) => /from '[./]*\/?(?:test\/)?harness\.ts'/.test(readFileSync(path, 'utf8')));
    assert.ok(usesHarness.length > 40, `only ${usesHarness.length} files import the harness`);
    assert.deepEqual(usesHarness.filter((path) => engineBlind(path) && !drivesBrowser(path)), ['src/cli/ingest.test.ts'], 'only the page tests and lore ingest\'s run on one engine');
    assert.deepEqual(
      files.filter((path) => guardedEngine(path) !== undefined).map((path) => [path, guardedEngine(path)]),
      [
        ['src/core/db/disk-full.test.ts', 'pglite'],
        ['src/core/db/pglite.test.ts', 'pglite'],
        ['src/core/db/postgres-refusals.test.ts', 'postgres'],
        ['test/chaos-embedded.test.ts', 'pglite'],
        ['test/chaos-postgres.test.ts', 'postgres'],
      ],
    );
    const pages = files.filter(drivesBrowser);
    assert.ok(pages.length >= 12, `only ${pages.length} files drive Chromium`);
    assert.deepEqual(pages.filter((path) => !path.startsWith('src/features/web/')), [], 'a page test outside src/features/web/');
    for (const suite of ['test/chaos-embedded.test.ts', 'test/chaos-postgres.test.ts', 'test/crash-recovery.test.ts', 'test/webhooks-crash.test.ts']) {
      assert.equal(startsLoreProcesses(suite), true, suite);
    }
    assert.equal(engineBlind('src/core/providers/embeddings/builtin.test.ts'), true);
  });
});
