// The migrated database each test server's database starts as a copy of (test/harness.ts), so
// that a test pays for initdb and the migrations once per pass rather than once per server.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/**
 * Whether the process `pid` runs. A template is named after the run that made it, so that a run
 * that was killed before removing its own leaves nothing behind past the next run.
 */
function running(pid) {
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Runs `lore migrate` on a database of its own; whether it succeeded. */
function migrate(databaseEnv) {
  // Configuration is checked as a whole: a server's database needs a token secret, unused here.
  const env = { ...process.env, LOG_LEVEL: 'warn', TOKEN_SECRET: 'test-template-secret-0123456789-0123456789', ...databaseEnv };
  if (!databaseEnv.DATABASE_URL) delete env.DATABASE_URL;
  return spawnSync(process.execPath, ['bin/lore.js', 'migrate'], { stdio: ['ignore', 'ignore', 'inherit'], env }).status === 0;
}

/**
 * A migrated template for `engine` (pglite or postgres, on the server at `serverUrl`):
 * a fresh PGlite directory costs 3.5 s of CPU (initdb and the migrations, in WebAssembly) where a
 * copy costs 0.3 s. Returns the harness's environment and how to remove the template.
 */
export async function migratedTemplate(engine, serverUrl) {
  if (engine === 'pglite') {
    for (const entry of readdirSync(tmpdir())) {
      const owner = /^lore-test-template-(\d+)-/.exec(entry)?.[1];
      if (owner && !running(owner)) rmSync(join(tmpdir(), entry), { recursive: true, force: true });
    }
    const dir = mkdtempSync(join(tmpdir(), `lore-test-template-${process.pid}-`));
    const template = { env: { LORE_TEST_PGLITE_TEMPLATE: dir }, remove: async () => rmSync(dir, { recursive: true, force: true }) };
    return migrate({ DATA_DIR: dir }) ? template : abandon(template);
  }
  const name = `lore_test_template_${process.pid}`;
  const admin = async (sql) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      return await client.query(sql);
    } finally {
      await client.end();
    }
  };
  const { rows } = await admin(`SELECT datname FROM pg_database WHERE datname LIKE 'lore\\_test\\_template\\_%'`);
  for (const { datname } of rows) {
    if (!running(datname.slice('lore_test_template_'.length))) await admin(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  }
  await admin(`DROP DATABASE IF EXISTS ${name}`);
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const template = { env: { LORE_TEST_POSTGRES_TEMPLATE: name }, remove: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
  return migrate({ DATABASE_URL: url.toString(), DATA_DIR: tmpdir() }) ? template : abandon(template);
}

/** Removes a template whose migration failed, and fails the run. */
async function abandon(template) {
  await template.remove();
  console.error('lore migrate failed on the test template: see above.');
  process.exit(1);
}
