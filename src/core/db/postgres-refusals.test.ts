/**
 * PostgreSQL refusing work, on a private cluster of this file's own: every connection slot taken
 * (SQLSTATE 53300, "too many clients") is a 503 that says so, and a database whose disk is full
 * (53100, its tablespace on a small tmpfs) is a 507 that says so; once the clients leave or the
 * space is back, the same server answers again and what it stored reads back.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { assertExactError } from '../../../test/assert-error.ts';
import { engine, startTestServerOn, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, ingest } from '../../../test/ingestion.ts';
import { PrivatePostgres } from '../../../test/private-postgres.ts';
import { SmallDisk } from '../../../test/small-disk.ts';
import { DiskFullError } from './disk-full.ts';
import { translateDbError } from './unavailable.ts';

const JOBS = '/api/v2/data-ingestion/jobs';
// Few slots, so that this test can take every one of them; the two lore servers' pools of 4 and
// this file's own clients fit with room to spare.
const MAX_CONNECTIONS = 20;
// template1's copy (about 7.5 MB) and lore's empty schema fit in 32 MB, with room for a few jobs.
const DISK_MB = 32;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

if (engine === 'postgres') {
  describe('PostgreSQL refuses work: too many clients, a full disk (private cluster)', () => {
    let cluster: PrivatePostgres;
    let admin: pg.Client;
    let disk: SmallDisk;
    const servers: TestServer[] = [];

    /** The connection string of database `name` of the cluster. */
    function databaseUrl(name: string): string {
      const url = new URL(cluster.url());
      url.pathname = `/${name}`;
      return url.toString();
    }

    /** A lore server (in this process) on a new database of the cluster, created with `createOptions`. */
    async function startLore(name: string, createOptions = '', overrides: Record<string, string> = {}): Promise<TestServer> {
      await admin.query(`CREATE DATABASE ${name} ${createOptions}`);
      const dataDir = await mkdtemp(join(tmpdir(), 'lore-refusals-'));
      const server = await startTestServerOn(
        { env: { DATABASE_URL: databaseUrl(name), DATA_DIR: dataDir }, drop: () => rm(dataDir, { recursive: true, force: true }) },
        { DATABASE_POOL_SIZE: '4', ...overrides },
      );
      servers.push(server);
      return server;
    }

    before(async () => {
      cluster = await PrivatePostgres.create();
      admin = new pg.Client({ connectionString: cluster.url() });
      await admin.connect();
      await admin.query(`ALTER SYSTEM SET max_connections = ${MAX_CONNECTIONS}`);
      await admin.end();
      await cluster.restart();
      admin = new pg.Client({ connectionString: cluster.url() });
      await admin.connect();
    });
    after(async () => {
      for (const server of servers) await server.close().catch(() => undefined);
      await admin?.end().catch(() => undefined);
      await cluster?.drop();
      await disk?.unmount();
    });

    test('every connection slot taken: 503 "too many clients" with Retry-After, and 200 once they are free', async () => {
      // No ingestion worker: it would reconnect at its next poll and hold a slot of its own.
      const lore = await startLore('lore_clients', '', { INGESTION_WORKERS: '0' });
      const { token } = await lore.tenant();
      assert.equal((await lore.request('GET', JOBS, { token })).status, 200);
      // The pool's idle connections end, as when the server was restarted...
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'lore_clients'`);
      while ((await admin.query(`SELECT 1 FROM pg_stat_activity WHERE datname = 'lore_clients'`)).rowCount! > 0) await sleep(50);
      await sleep(200);
      // ...and this test takes every slot left.
      const held: pg.Client[] = [];
      let refusal: (Error & { code?: string }) | undefined;
      while (!refusal) {
        const client = new pg.Client({ connectionString: cluster.url() });
        client.on('error', () => undefined);
        await client.connect().then(
          () => held.push(client),
          (error: Error) => (refusal = error),
        );
        assert.ok(held.length <= MAX_CONNECTIONS, 'the cluster accepts more connections than max_connections');
      }
      try {
        assert.equal(refusal.code, '53300', refusal.message);
        const path = '/v2/data-ingestion/jobs';
        const answer = await lore.request('GET', JOBS, { token });
        const message = assertExactError(answer, 503, path);
        assert.equal(
          message,
          'The database refused the connection: too many clients (max_connections, or a connection limit of the role or database, is reached); retry in a few seconds.',
        );
        assert.equal(answer.headers.get('retry-after'), '5');
      } finally {
        await Promise.all(held.map((client) => client.end()));
      }
      const back = await lore.request('GET', JOBS, { token });
      assert.equal(back.status, 200, back.text);
    });

    test('a full disk: submits and queries answer 507 "the disk is full"; once space is back, the data reads back and writes succeed', async () => {
      disk = await SmallDisk.mount(DISK_MB);
      // The database lives on the small disk (its tablespace); the write-ahead log stays on the
      // cluster's own, as on a server whose data volume fills up.
      execFileSync('chown', ['postgres:postgres', disk.path]);
      await admin.query(`CREATE TABLESPACE lore_small LOCATION '${disk.path}'`);
      const lore = await startLore('lore_full', 'TABLESPACE lore_small');
      const { token } = await lore.tenant();
      const kb = await createKnowledgeBase(lore, token);
      const stored = [
        { id: 'returns', content: 'Items can be returned within 30 days of delivery.' },
        { id: 'shipping', content: 'Orders ship from the warehouse within 24 hours.' },
      ];
      assert.equal((await ingest(lore, token, kb, stored)).status, 'completed');
      const experience = await lore.request('POST', '/api/v2/experiences', { token, body: { name: 'help', knowledgeBaseIds: [kb] } });
      assert.equal(experience.status, 201, experience.text);

      await disk.fill();
      assert.ok((await disk.free()) < 8192, `${await disk.free()} bytes free`);
      const message = "The database server's disk is full: nothing more can be stored until space is freed on it.";
      // 2,000 records of 500 bytes: 1 MB of payload, more than any page left free holds.
      const records = Array.from({ length: 2000 }, (_, index) => ({ id: `full-${index}`, content: `Record ${index}: ${'lorem ipsum dolor '.repeat(28)}` }));
      const submit = await lore.request('POST', JOBS, { token, body: { adapterType: 'generic-json', knowledgeBaseId: kb, data: { records } } });
      assert.equal(assertExactError(submit, 507, '/v2/data-ingestion/jobs'), message);
      // A first question writes the first rows of its session and its log: pages that need space.
      const query = await lore.request('POST', '/api/v2/query', { body: { text: 'How long do I have to return an item?', experienceId: experience.body.id } });
      assert.equal(assertExactError(query, 507, '/v2/query'), message);

      // The driver's own error object, as the mapping sees it.
      const direct = new pg.Client({ connectionString: databaseUrl('lore_full') });
      await direct.connect();
      try {
        const failure = await direct.query(`CREATE TABLE filler AS SELECT repeat('x', 1000) AS x FROM generate_series(1, 10000)`).then(
          () => assert.fail('the table was created on a full disk'),
          (error: unknown) => error,
        );
        assert.equal((failure as { code?: string }).code, '53100');
        assert.throws(() => translateDbError(failure), (error: unknown) => error instanceof DiskFullError && error.message === message && error.cause === failure);
      } finally {
        await direct.end();
      }

      await disk.empty();
      const answer = await lore.request('POST', '/api/v2/query', { body: { text: 'How long do I have to return an item?', experienceId: experience.body.id } });
      assert.equal(answer.status, 200, answer.text);
      const job = await ingest(lore, token, kb, records.slice(0, 50));
      assert.equal(job.status, 'completed');
      assert.equal(job.data.progress.successful, 50);
      const { rows } = await lore.context.db.query<{ record_id: string; content: string }>('SELECT record_id, content FROM entries WHERE knowledge_base_id = $1', [kb]);
      const expected = [...stored, ...records.slice(0, 50)].map((record) => [record.id, record.content]).sort();
      assert.deepEqual(rows.map((row) => [row.record_id, row.content]).sort(), expected);
    });
  });
}
