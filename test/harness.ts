/**
 * Starts the real lore server on a random loopback port, on the engine this test run uses
 * (LORE_TEST_ENGINE=pglite|postgres), in a database of its own, and talks HTTP to it
 * (test-server.ts, re-exported here).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Logger } from 'pino';
import { embeddedTestDatabase, startTestServerOn, type TestDatabase, type TestServer } from './test-server.ts';

export * from './test-server.ts';

export const engine = (process.env.LORE_TEST_ENGINE ?? 'pglite') as 'pglite' | 'postgres';

/**
 * A database of its own for one server: a temp directory, or a fresh PostgreSQL database. With
 * `migrated`, and a migrated template prepared by scripts/run-tests.js, it starts as a copy of the
 * template; the server's own migration step then finds it up to date, as after a restart.
 */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  if (engine === 'pglite') return embeddedTestDatabase(options);
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error('LORE_TEST_ENGINE=postgres needs TEST_DATABASE_URL');
  const name = `lore_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  const template = options.migrated ? process.env.LORE_TEST_POSTGRES_TEMPLATE : undefined;
  await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  const dir = await mkdtemp(join(tmpdir(), 'lore-test-'));
  return {
    env: { DATABASE_URL: url.toString(), DATA_DIR: dir },
    async drop() {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Starts a server on a database of its own, logging to `logger` if given. Close it in `after`. */
export async function startTestServer(overrides: Record<string, string> = {}, logger?: Logger): Promise<TestServer> {
  return startTestServerOn(await createTestDatabase({ migrated: true }), overrides, logger);
}
