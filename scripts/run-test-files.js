// Runs test files in the order given, with the TAP reporter: `node --test` sorts its files by name,
// and scripts/run-tests.js starts the longest first (test-files.js). Usage:
//   node --import tsx scripts/run-test-files.js <concurrency> <file>...
// The files run in child processes that inherit this process's flags (`--import tsx`). Each file's
// wall time (from its process's start to its end) is printed as a TAP comment when it ends, and
// the slowest files once all have ended: where CI's minutes go.
import { relative, resolve } from 'node:path';
import { run } from 'node:test';
import { tap } from 'node:test/reporters';

/** How many of the slowest files the summary lists. */
const SLOWEST = 15;

const [concurrency, ...files] = process.argv.slice(2);
const stream = run({ files: files.map((file) => resolve(file)), concurrency: Number(concurrency), timeout: 300_000 });
stream.on('test:fail', () => {
  process.exitCode = 1;
});

// A file is a test of its own to the runner, named by its path: dequeued when its process starts,
// complete when it ends (its own tests' events arrive in between, replayed from its output).
const started = new Map();
const seconds = new Map();
const isFile = (data) => data.nesting === 0 && data.file !== undefined && data.name === data.file;
stream.on('test:dequeue', (data) => {
  if (isFile(data)) started.set(data.file, performance.now());
});
stream.on('test:complete', (data) => {
  if (!isFile(data) || !started.has(data.file)) return;
  const wall = (performance.now() - started.get(data.file)) / 1000;
  seconds.set(data.file, wall);
  process.stdout.write(`# file ${wall.toFixed(1)} s ${relative(process.cwd(), data.file)}\n`);
});
stream.on('end', () => {
  const slowest = [...seconds].sort((a, b) => b[1] - a[1]).slice(0, SLOWEST);
  process.stdout.write(`# slowest ${slowest.length} of ${seconds.size} test files (wall seconds, ${concurrency} at a time):\n`);
  for (const [file, wall] of slowest) process.stdout.write(`#   ${wall.toFixed(1).padStart(6)}  ${relative(process.cwd(), file)}\n`);
});
stream.compose(tap).pipe(process.stdout);
