/**
 * The runner's clock (run-test-files.js): each file's wall time as it ends, and the slowest files
 * at the end, so that a CI run says where its minutes went.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';

const execFileAsync = promisify(execFile);

describe('the test runner prints each file\'s wall time', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lore-run-test-files-'));
    await writeFile(join(dir, 'slow.test.mjs'), "import { test } from 'node:test';\ntest('slow', () => new Promise((done) => setTimeout(done, 1200)));\n");
    await writeFile(join(dir, 'fast.test.mjs'), "import { test } from 'node:test';\ntest('fast', () => {});\n");
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('a line per file when it ends, then the slowest first', async () => {
    const files = ['slow', 'fast'].map((name) => join(dir, `${name}.test.mjs`));
    // Without this test's own runner context, which would make the child report to this runner.
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    const { stdout } = await execFileAsync(process.execPath, ['scripts/run-test-files.js', '2', ...files], { env });
    const perFile = [...stdout.matchAll(/^# file (\d+\.\d) s (.+)$/gm)].map((match) => ({ seconds: Number(match[1]), file: match[2]! }));
    assert.deepEqual(perFile.map((line) => line.file).sort(), files.map((file) => relative(process.cwd(), file)).sort());
    assert.ok(perFile.find((line) => line.file.endsWith('slow.test.mjs'))!.seconds >= 1.2, stdout);
    const summary = stdout.slice(stdout.indexOf('# slowest 2 of 2 test files'));
    assert.match(summary, /^# slowest 2 of 2 test files \(wall seconds, 2 at a time\):\n# +\d+\.\d +\S*slow\.test\.mjs\n# +\d+\.\d +\S*fast\.test\.mjs\n/);
  });
});
