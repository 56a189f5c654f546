#!/usr/bin/env node
// Runs every *.test.ts file once on the embedded engine (PGlite) and once more on a PostgreSQL
// server when TEST_DATABASE_URL (or DATABASE_URL) is set, except the files that cannot tell the
// engines apart (test-files.js). Each test file starts its own server on its own database, so
// files run in parallel.
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { engineBlind, longestFirst, testFiles } from './test-files.js';
import { migratedTemplate } from './test-template.js';

const filter = process.argv.slice(2);
const files = longestFirst(testFiles(['src', 'test', 'web', 'scripts']).filter((file) => filter.length === 0 || filter.some((part) => file.includes(part))));
const serverUrl = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL;
const engines = (process.env.LORE_TEST_ENGINES ?? (serverUrl ? 'pglite,postgres' : 'pglite')).split(',');

// The default encoder (builtin-fast) distils its token table at its first use, about a minute of
// both cores. Every test server shares one models directory, prepared once here, instead of
// distilling in each test's own data directory.
process.env.MODELS_DIR ||= join(tmpdir(), 'lore-test-models');
const prepared = spawnSync(process.execPath, ['bin/lore.js', 'prepare'], { stdio: 'inherit', env: { ...process.env, DATA_DIR: tmpdir(), LOG_LEVEL: 'warn' } });
if (prepared.status !== 0) process.exit(1);

// A file that cannot tell the engines apart (test-files.js) runs on the first pass only.
const blind = new Set(files.filter(engineBlind));

let failed = false;
for (const [pass, engine] of engines.entries()) {
  if (engine === 'postgres' && !serverUrl) {
    console.error('LORE_TEST_ENGINES names postgres but neither TEST_DATABASE_URL nor DATABASE_URL is set.');
    process.exit(1);
  }
  const passFiles = pass === 0 ? files : files.filter((file) => !blind.has(file));
  const blindNote = pass === 0 ? `, of which ${blind.size} cannot tell the engines apart` : `; the ${blind.size} that cannot tell the engines apart ran on ${engines[0]}`;
  console.log(`\n# engine: ${engine} (${passFiles.length} test files${blindNote})`);
  if (passFiles.length === 0) continue;
  const template = await migratedTemplate(engine, serverUrl);
  const env = { ...process.env, ...template.env, LORE_TEST_ENGINE: engine, TEST_DATABASE_URL: serverUrl ?? '' };
  // The server under test takes its database from the harness, never from the caller's DATABASE_URL.
  delete env.DATABASE_URL;
  try {
    const result = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'scripts/run-test-files.js', String(engine === 'pglite' ? 2 : 3), ...passFiles],
      { stdio: 'inherit', env },
    );
    if (result.status !== 0) failed = true;
  } finally {
    await template.remove();
  }
}
if (!serverUrl) console.log('\n# PostgreSQL engine skipped: set TEST_DATABASE_URL to run the suite on a server as well.');
process.exit(failed ? 1 : 0);
