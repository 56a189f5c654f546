// Runs test files in lanes, each file in a process of its own with its own environment (the
// engine of its pass), so that the two engines' files share one queue instead of two passes one
// after the other, each ending on one busy core. A lane runs its files in the order given, its
// concurrency at a time; the lanes run side by side, and a lane whose files are done helps the
// others. A file's TAP output is printed whole when it ends (files running together never
// interleave), followed by its wall time; the slowest files and each lane's end once all have
// ended: where CI's minutes go.
import { spawn } from 'node:child_process';
import { relative, resolve } from 'node:path';

/** How many of the slowest files the summary lists. */
const SLOWEST = 15;

/**
 * A file still running after this long is stopped and failed: a hung file, since the longest,
 * chaos-embedded, took 290 s on a loaded machine (2026-12-02), a breath under the 300 s the
 * runner allowed before.
 */
const FILE_TIMEOUT_MS = 600_000;

/**
 * V8 recompiles a WebAssembly function with its optimizing compiler once it has run about this
 * many bytes of code: 100 times the default of 1,800,000. PGlite is one large WebAssembly module,
 * and a test file lives seconds: with the default, opening an embedded server from the migrated
 * template took 3.4-3.7 s of CPU, mostly optimizing functions that would never run again, and
 * 2.5 s with this budget (2.0 s with no optimizing at all, which would leave the long suites'
 * hot loops unoptimized). Measured on 2026-12-02, an embedded test server's start and stop alone.
 */
const WASM_TIERING_BUDGET = 180_000_000;

/** Runs one file with the TAP reporter; its output, and whether it passed, when it ends. */
function runFile(job) {
  return new Promise((done) => {
    const env = { ...process.env, ...job.env };
    // Inside a test (run-test-files.test.ts) the child would otherwise report to that test's runner.
    delete env.NODE_TEST_CONTEXT;
    const child = spawn(process.execPath, [`--wasm-tiering-budget=${WASM_TIERING_BUDGET}`, '--import', 'tsx', '--test-reporter=tap', resolve(job.file)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, FILE_TIMEOUT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const end = timedOut ? `# ${job.file}: stopped after ${FILE_TIMEOUT_MS / 1000} s\n` : code === 0 ? '' : `# ${job.file}: exit ${code ?? signal}\n`;
      done({ ok: code === 0 && !timedOut, text: Buffer.concat(output).toString() + end });
    });
  });
}

/**
 * Runs `jobs` (run-test-files.d.ts) in their lanes (`lanes`: concurrency by lane name) and prints
 * as it goes, through `write`. Resolves to each file's result, in the order the files ended.
 */
export async function runTestFiles({ jobs, lanes, write = (text) => process.stdout.write(text) }) {
  const started = performance.now();
  const results = [];
  const laneEnds = {};
  const label = (job) => `${relative(process.cwd(), resolve(job.file))} (${job.engine})`;
  const queues = Object.fromEntries(Object.keys(lanes).map((lane) => [lane, jobs.filter((job) => job.lane === lane)]));
  // A lane's worker whose own queue is empty takes the next file of another lane's: a lane's
  // concurrency is what it is sure to get, and no core idles while a queue still waits.
  const next = (lane) => queues[lane].shift() ?? Object.values(queues).find((queue) => queue.length > 0)?.shift();
  await Promise.all(
    Object.entries(lanes).map(async ([lane, concurrency]) => {
      const worker = async () => {
        for (let job = next(lane); job; job = next(lane)) {
          const begun = performance.now();
          const { ok, text } = await runFile(job);
          const seconds = (performance.now() - begun) / 1000;
          results.push({ ok, seconds, job });
          write(`${text}# file ${seconds.toFixed(1)} s ${label(job)}${ok ? '' : ' FAILED'}\n`);
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
      laneEnds[lane] = (performance.now() - started) / 1000;
    }),
  );
  const slowest = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, SLOWEST);
  const laneNote = Object.entries(lanes).map(([lane, concurrency]) => `${lane} ${concurrency} at a time, ended at ${laneEnds[lane].toFixed(0)} s`);
  write(`# slowest ${slowest.length} of ${results.length} test files (wall seconds; ${laneNote.join('; ')}):\n`);
  for (const { seconds, job } of slowest) write(`#   ${seconds.toFixed(1).padStart(6)}  ${label(job)}\n`);
  const failed = results.filter((result) => !result.ok);
  if (failed.length > 0) write(`# failed ${failed.length} of ${results.length} test files:\n${failed.map(({ job }) => `#   ${label(job)}\n`).join('')}`);
  return results;
}
