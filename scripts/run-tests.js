#!/usr/bin/env node
// Runs every *.test.ts file on the embedded engine (PGlite) and on a PostgreSQL server when
// TEST_DATABASE_URL (or DATABASE_URL) is set, except the files that cannot tell the engines apart
// (test-files.js), which run on the first engine only. Each test file starts its own server on its
// own database, so files run in parallel: both engines' files in one queue, and the files that
// start lore processes in a lane of their own beside it (run-test-files.js).
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTestFiles } from './run-test-files.js';
import { engineBlind, guardedEngine, longestFirst, startsLoreProcesses, testFiles } from './test-files.js';
import { migratedTemplate } from './test-template.js';

const filter = process.argv.slice(2);
const files = longestFirst(testFiles(['src', 'test', 'web', 'scripts']).filter((file) => filter.length === 0 || filter.some((part) => file.includes(part))));
const serverUrl = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL;
const engines = (process.env.LORE_TEST_ENGINES ?? (serverUrl ? 'pglite,postgres' : 'pglite')).split(',');
if (engines.includes('postgres') && !serverUrl) {
  console.error('LORE_TEST_ENGINES names postgres but neither TEST_DATABASE_URL nor DATABASE_URL is set.');
  process.exit(1);
}
// The server under test takes its database from the harness, never from the caller's DATABASE_URL.
delete process.env.DATABASE_URL;

/**
 * Concurrency by lane, 3 at a time in all on 2 cores, as the PostgreSQL pass ran (the embedded
 * pass ran 2; part of a PostgreSQL file's work is the server's). The files that start lore
 * processes get 2: they are the longest (on a loaded machine on 2026-12-02 the embedded engine's
 * 12 took 1,019 s, the chaos suite alone 290 s), and a long one started last ends the run alone.
 * They spend part of their time waiting for a process to start, die or take over a job, which the
 * third file fills.
 */
const lanes = { processes: 2, files: 1 };

// The default encoder (builtin-fast) distils its token table at its first use: 33 s of CPU on two
// threads (2026-12-02), 95 s of wall time on a loaded machine. Every test server shares one models
// directory, prepared once here, instead of distilling in each test's own data directory.
process.env.MODELS_DIR ||= join(tmpdir(), 'lore-test-models');
const prepared = spawnSync(process.execPath, ['bin/lore.js', 'prepare'], { stdio: 'inherit', env: { ...process.env, DATA_DIR: tmpdir(), LOG_LEVEL: 'warn' } });
if (prepared.status !== 0) process.exit(1);

/** The engines a file runs on: its guard's only, the first only when it is blind, else every one. */
function enginesOf(file) {
  const only = guardedEngine(file);
  if (only) return engines.includes(only) ? [only] : [];
  return engineBlind(file) ? engines.slice(0, 1) : engines;
}

const templates = [];
try {
  for (const engine of engines) templates.push(await migratedTemplate(engine, serverUrl));
  // Every file gets every engine's template: a file of one engine may start a server of the other
  // (test-server.ts's embedded one).
  const templateEnv = Object.assign({}, ...templates.map((template) => template.env));
  const jobs = files.flatMap((file) =>
    enginesOf(file).map((engine) => ({
      file,
      engine,
      env: { ...templateEnv, LORE_TEST_ENGINE: engine, TEST_DATABASE_URL: serverUrl ?? '' },
      lane: startsLoreProcesses(file) ? 'processes' : 'files',
    })),
  );
  const blind = files.filter(engineBlind).length;
  console.log(`# engines: ${engines.join(', ')}; ${files.length} test files, ${blind} of them on ${engines[0]} only (they cannot tell the engines apart): ${jobs.length} runs`);
  const results = await runTestFiles({ jobs, lanes });
  process.exitCode = results.every((result) => result.ok) ? 0 : 1;
} finally {
  for (const template of templates) await template.remove();
}
if (!serverUrl) console.log('\n# PostgreSQL engine skipped: set TEST_DATABASE_URL to run the suite on a server as well.');
