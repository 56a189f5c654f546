/**
 * The runner's lanes and clock (run-test-files.js): each file in a process of its own with its own
 * environment, its output whole and its wall time as it ends, and the slowest files at the end, so
 * that a CI run says where its minutes went.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runTestFiles } from './run-test-files.js';

describe('the test runner runs files in lanes and prints each file\'s wall time', () => {
  let dir: string;
  const file = (name: string) => join(dir, `${name}.test.mjs`);
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lore-run-test-files-'));
    await writeFile(file('slow'), "import { test } from 'node:test';\ntest('slow', () => new Promise((done) => setTimeout(done, 1200)));\n");
    await writeFile(file('fast'), "import { test } from 'node:test';\ntest('fast', () => {});\n");
    await writeFile(file('engine'), "import assert from 'node:assert/strict';\nimport { test } from 'node:test';\ntest('engine', () => assert.equal(process.env.ENGINE_OF_THIS_RUN, 'postgres'));\n");
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('a line per file when it ends, after its output; then the slowest first and each lane\'s end', async () => {
    let output = '';
    const jobs = [
      { file: file('slow'), engine: 'pglite', env: {}, lane: 'processes' },
      { file: file('fast'), engine: 'pglite', env: {}, lane: 'files' },
    ];
    const results = await runTestFiles({ jobs, lanes: { files: 2, processes: 1 }, write: (text) => (output += text) });
    assert.deepEqual(results.map((result) => result.ok), [true, true]);
    const perFile = [...output.matchAll(/^# file (\d+\.\d) s (.+) \(pglite\)$/gm)].map((match) => ({ seconds: Number(match[1]), file: match[2]! }));
    // The fast file ends first: the lanes run side by side.
    assert.deepEqual(perFile.map((line) => line.file), ['fast', 'slow'].map((name) => relative(process.cwd(), file(name))));
    assert.ok(perFile[1]!.seconds >= 1.2, output);
    assert.match(output, /^ok 1 - fast\n[^]*# file [\d.]+ s \S*fast\.test\.mjs/m);
    const summary = output.slice(output.indexOf('# slowest 2 of 2 test files'));
    assert.match(summary, /^# slowest 2 of 2 test files \(wall seconds; files 2 at a time, ended at \d+ s; processes 1 at a time, ended at \d+ s\):\n# +\d+\.\d +\S*slow\.test\.mjs \(pglite\)\n# +\d+\.\d +\S*fast\.test\.mjs \(pglite\)\n$/);
  });

  test('each file runs with its own environment; a failed file is named as such and at the end', async () => {
    let output = '';
    const jobs = ['pglite', 'postgres'].map((engine) => ({ file: file('engine'), engine, env: { ENGINE_OF_THIS_RUN: engine }, lane: 'files' }));
    const results = await runTestFiles({ jobs, lanes: { files: 2 }, write: (text) => (output += text) });
    assert.deepEqual(Object.fromEntries(results.map((result) => [result.job.engine, result.ok])), { pglite: false, postgres: true });
    assert.match(output, /^# file [\d.]+ s \S*engine\.test\.mjs \(pglite\) FAILED$/m);
    assert.match(output, /^# failed 1 of 2 test files:\n# +\S*engine\.test\.mjs \(pglite\)\n$/m);
  });
});
