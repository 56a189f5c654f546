// Runs test files in the order given, with the TAP reporter: `node --test` sorts its files by name,
// and scripts/run-tests.js starts the longest first (test-files.js). Usage:
//   node --import tsx scripts/run-test-files.js <concurrency> <file>...
// The files run in child processes that inherit this process's flags (`--import tsx`).
import { resolve } from 'node:path';
import { run } from 'node:test';
import { tap } from 'node:test/reporters';

const [concurrency, ...files] = process.argv.slice(2);
const stream = run({ files: files.map((file) => resolve(file)), concurrency: Number(concurrency), timeout: 300_000 });
stream.on('test:fail', () => {
  process.exitCode = 1;
});
stream.compose(tap).pipe(process.stdout);
