/**
 * The two faults of USearch (the pinned version) that pglite-vectors.ts works around (decision
 * 171), measured on the library alone so that they can be checked again before it is upgraded.
 * Prints one JSON line:
 *
 * - `unreachable`: graphs of random vectors built by one batch add on every core and on one thread;
 *   per build, how many graphs have nodes that a search for their own vector does not find at the
 *   graph's full depth, and how many such nodes there are in all.
 * - `removeHang`: a graph of `--churn-size` chunks whose vectors are replaced one at a time
 *   (`remove`, then `add` under a new key), in a child process; the number of removals after which
 *   `remove` stopped returning (no progress for 5 s), or null if it still returned after 20 times
 *   the graph's size.
 *
 *   npm run bench:graph-faults [-- --graphs 200 --size 60 --dimension 16 --churn-size 2000]
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { newGraph } from '../src/core/db/pglite-vectors.ts';
import { random } from '../test/random.ts';

const { version } = JSON.parse(await readFile(new URL('../node_modules/usearch/package.json', import.meta.url), 'utf8')) as { version: string };

const { values: options } = parseArgs({
  options: {
    graphs: { type: 'string', default: '200' },
    size: { type: 'string', default: '60' },
    dimension: { type: 'string', default: '16' },
    'churn-size': { type: 'string', default: '2000' },
    churn: { type: 'boolean', default: false },
  },
});
const dimension = Number(options.dimension);
const next = random(20261129);

function vectors(count: number): Float32Array {
  return Float32Array.from({ length: count * dimension }, () => next() - 0.5);
}

function unreachable(threads: number) {
  const size = Number(options.size);
  let graphs = 0;
  let nodes = 0;
  for (let round = 0; round < Number(options.graphs); round++) {
    const index = newGraph(dimension);
    const keys = BigUint64Array.from({ length: size }, (_, key) => BigInt(key + 1));
    const flat = vectors(size);
    index.add(keys, flat, threads);
    let lost = 0;
    for (let node = 0; node < size; node++) {
      const found = index.search(flat.subarray(node * dimension, (node + 1) * dimension), size, 1);
      if (!found.keys.includes(keys[node]!)) lost++;
    }
    if (lost > 0) graphs++;
    nodes += lost;
  }
  return { graphsWithUnreachable: graphs, unreachableNodes: nodes, nodes: size * Number(options.graphs) };
}

/** In the child: replaces vectors one at a time, printing the removals done. */
function churn(): void {
  const size = Number(options['churn-size']);
  const index = newGraph(dimension);
  const live = BigUint64Array.from({ length: size }, (_, key) => BigInt(key + 1));
  index.add(live, vectors(size), 1);
  let key = BigInt(size + 1);
  for (let removals = 1; removals <= 20 * size; removals++) {
    const slot = removals % size;
    index.remove(live[slot]!);
    index.add(key, vectors(1), 1);
    live[slot] = key++;
    if (removals % 100 === 0) process.stdout.write(`${removals}\n`);
  }
  process.stdout.write('done\n');
}

function removeHang(): Promise<number | null> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--churn', '--churn-size', options['churn-size'], '--dimension', options.dimension], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let removals = 0;
  return new Promise((resolve) => {
    let stalled = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      for (const line of text.split('\n').filter(Boolean)) {
        if (line === 'done') return resolve(null);
        removals = Number(line);
      }
      clearTimeout(stalled);
      stalled = setTimeout(() => child.kill('SIGKILL'), 5000);
    });
    child.on('exit', () => {
      clearTimeout(stalled);
      resolve(removals === 0 ? null : removals);
    });
  });
}

if (options.churn) {
  churn();
} else {
  console.log(
    JSON.stringify({
      bench: 'graph-faults',
      usearch: version,
      cores: availableParallelism(),
      dimension,
      graphSize: Number(options.size),
      unreachable: { everyCore: unreachable(0), oneThread: unreachable(1) },
      removeHang: { graphSize: Number(options['churn-size']), removalsBeforeHang: await removeHang() },
    }),
  );
}
