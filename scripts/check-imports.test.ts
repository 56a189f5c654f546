/**
 * The import check of the lint (check-imports.js): it fails on a circle, type-only imports
 * included, on a loop between feature folders and on an import up the floors, naming the files;
 * and it passes on the real tree. The deliberate faults live in a temporary tree, never in src.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { describeProblems, findProblems, importGraph } from './check-imports.js';

const SCRIPT = new URL('./check-imports.js', import.meta.url).pathname;
const ROOT = join(dirname(SCRIPT), '..');

describe('the import check', () => {
  const dirs: string[] = [];
  after(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });
  // A fresh tree per case: the faults of one case must not be what another case finds.
  const tree = async (files: Record<string, string>) => {
    const dir = await mkdtemp(join(tmpdir(), 'lore-check-imports-'));
    dirs.push(dir);
    const all = {
      'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', allowImportingTsExtensions: true, noEmit: true } }),
      ...files,
    };
    for (const [name, text] of Object.entries(all)) {
      await mkdir(dirname(join(dir, name)), { recursive: true });
      await writeFile(join(dir, name), text);
    }
    return dir;
  };
  const problemsOf = async (files: Record<string, string>) => findProblems(await importGraph(await tree(files), ['src']));

  test('a circle of type-only imports fails, naming its files in order', async () => {
    const problems = await problemsOf({
      'src/core/a.ts': "import type { B } from './b.ts';\nexport type A = { b?: B };\n",
      'src/core/b.ts': "import type { C } from './c.ts';\nexport type B = { c?: C };\n",
      'src/core/c.ts': "import type { A } from './a.ts';\nexport type C = { a?: A };\n",
    });
    assert.deepEqual(problems.circles, [['src/core/a.ts', 'src/core/b.ts', 'src/core/c.ts', 'src/core/a.ts']]);
    assert.deepEqual(describeProblems(problems), ['import circle: src/core/a.ts -> src/core/b.ts -> src/core/c.ts -> src/core/a.ts']);
  });

  test('a loop between feature folders through a third fails, with no file circle, naming the imports', async () => {
    const problems = await problemsOf({
      'src/features/one/entry.ts': "import { two } from '../two/entry.ts';\nexport const one = two + 1;\n",
      'src/features/one/leaf.ts': 'export const leaf = 1;\n',
      'src/features/two/entry.ts': "import { three } from '../three/entry.ts';\nexport const two = three + 1;\n",
      'src/features/three/entry.ts': "import { leaf } from '../one/leaf.ts';\nexport const three = leaf + 1;\n",
    });
    assert.deepEqual(problems.circles, []);
    assert.deepEqual(problems.featureLoops, [
      {
        features: ['one', 'two', 'three', 'one'],
        imports: [
          'src/features/one/entry.ts -> src/features/two/entry.ts',
          'src/features/two/entry.ts -> src/features/three/entry.ts',
          'src/features/three/entry.ts -> src/features/one/leaf.ts',
        ],
      },
    ]);
  });

  test('an import up the floors fails, except from a test', async () => {
    const problems = await problemsOf({
      'src/core/low.ts': "import { high } from '../features/one/high.ts';\nexport const low = high;\n",
      'src/core/low.test.ts': "import { high } from '../features/one/high.ts';\nexport const used = high;\n",
      'src/features/one/high.ts': 'export const high = 1;\n',
    });
    assert.deepEqual(problems.upward, ['src/core/low.ts -> src/features/one/high.ts']);
  });

  test('the command exits 1 and prints the circle; it exits 0 on the real tree', async () => {
    const dir = await tree({ 'src/a.ts': "import './b.ts';\n", 'src/b.ts': "import './a.ts';\n" });
    const failed = spawnSync(process.execPath, [SCRIPT, dir], { encoding: 'utf8' });
    assert.equal(failed.status, 1);
    assert.match(failed.stderr, /import circle: src\/a\.ts -> src\/b\.ts -> src\/a\.ts/);

    const passed = spawnSync(process.execPath, [SCRIPT, ROOT], { encoding: 'utf8' });
    assert.equal(passed.status, 0, passed.stderr);
    assert.match(passed.stdout, /no import circle, no loop between feature folders, no import up the floors/);
  });
});
