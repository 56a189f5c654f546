/**
 * The embedded engine on a disk that fills up, reproduced on a real small file system (a tmpfs of
 * this file's own): submits and queries answer 507 in the spec's error shape, /readyz names the
 * disk, even PostgreSQL's PANIC on a write-ahead log it cannot extend is survived, and once space
 * is back the same process answers again with everything it had stored. A restart on a full disk
 * says so and exits 1.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { assertExactError } from '../../../test/assert-error.ts';
import { ADMIN_KEY, engine, startTestServerOn, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, ingest } from '../../../test/ingestion.ts';
import { runLore } from '../../../test/lore-process.ts';
import { SmallDisk } from '../../../test/small-disk.ts';

const run = promisify(execFile);
const JOBS = '/api/v2/data-ingestion/jobs';
// The migrated template takes about 39 MB (16 MB of them its first WAL segment): 96 MB leave room
// for a second segment and a few jobs.
const DISK_MB = 96;
const FULL = 'The disk holding DATA_DIR is full: nothing more can be stored until space is freed.';
const READYZ_FULL = /^The disk holding DATA_DIR is full: (\d+) bytes free\.$/;
// 2,000 records of 500 bytes: 1 MB of payload, more than any page left free holds.
const records = Array.from({ length: 2000 }, (_, index) => ({ id: `full-${index}`, content: `Record ${index}: ${'lorem ipsum dolor '.repeat(28)}` }));
const stored = [
  { id: 'returns', content: 'Items can be returned within 30 days of delivery.' },
  { id: 'shipping', content: 'Orders ship from the warehouse within 24 hours.' },
];

if (engine === 'pglite') {
  describe('the embedded engine on a full disk (a tmpfs of its own)', () => {
    let disk: SmallDisk;
    let dataDir: string;
    let lore: TestServer | undefined;
    let token: string;
    let kb: string;
    let experienceId: string;
    let cwd: string;

    const ask = () => lore!.request('POST', '/api/v2/query', { body: { text: 'How long do I have to return an item?', experienceId } });
    const submit = (data: unknown) => lore!.request('POST', JOBS, { token, body: { adapterType: 'generic-json', knowledgeBaseId: kb, data } });
    /** The records of the knowledge base as stored, sorted: [record id, content]. */
    const entries = async () => {
      const { rows } = await lore!.context.db.query<{ record_id: string; content: string }>('SELECT record_id, content FROM entries WHERE knowledge_base_id = $1', [kb]);
      return rows.map((row) => [row.record_id, row.content]).sort();
    };
    const expectedEntries = (...sets: Array<typeof stored>) => sets.flat().map((record) => [record.id, record.content]).sort();

    before(async () => {
      disk = await SmallDisk.mount(DISK_MB);
      dataDir = join(disk.path, 'data');
      cwd = await mkdtemp(join(tmpdir(), 'lore-disk-full-'));
      await run('cp', ['-a', `${process.env.LORE_TEST_PGLITE_TEMPLATE}/.`, dataDir]);
      lore = await startTestServerOn({ env: { DATA_DIR: dataDir }, drop: async () => undefined });
      ({ token } = await lore.tenant());
      kb = await createKnowledgeBase(lore, token);
      assert.equal((await ingest(lore, token, kb, stored)).status, 'completed');
      const experience = await lore.request('POST', '/api/v2/experiences', { token, body: { name: 'help', knowledgeBaseIds: [kb] } });
      assert.equal(experience.status, 201, experience.text);
      experienceId = experience.body.id;
    });
    after(async () => {
      await lore?.close().catch(() => undefined);
      await disk?.unmount();
      await rm(cwd, { recursive: true, force: true });
    });

    test('submits and queries answer 507, /readyz answers 503 naming the disk; with space back, the data reads back and writes succeed', async () => {
      assert.equal((await lore!.request('GET', '/readyz')).status, 200);
      await disk.fill();
      assert.ok((await disk.free()) < 8192, `${await disk.free()} bytes free`);

      assert.equal(assertExactError(await submit({ records }), 507, '/v2/data-ingestion/jobs'), FULL);
      // A first question writes the first rows of its session and its log: pages that need space.
      assert.equal(assertExactError(await ask(), 507, '/v2/query'), FULL);
      const ready = await lore!.request('GET', '/readyz');
      const [, free] = READYZ_FULL.exec(assertExactError(ready, 503, '/readyz')) ?? assert.fail(ready.text);
      assert.ok(Number(free) < 8192, free);

      await disk.empty();
      assert.equal((await lore!.request('GET', '/readyz')).status, 200);
      const answer = await ask();
      assert.equal(answer.status, 200, answer.text);
      const job = await ingest(lore!, token, kb, records.slice(0, 50));
      assert.equal(job.status, 'completed');
      assert.equal(job.data.progress.successful, 50);
      assert.deepEqual(await entries(), expectedEntries(stored, records.slice(0, 50)));
    });

    test('PostgreSQL panics on a WAL segment it cannot create: 507 while the disk is full, then the database is reopened with its data', async () => {
      await disk.fill();
      // The next WAL record needs a new segment file, which the full disk cannot hold: PostgreSQL
      // raises a PANIC, after which PGlite's session hangs.
      await lore!.context.db.query('SELECT pg_switch_wal()');
      assert.equal(assertExactError(await submit({ records: records.slice(100, 101) }), 507, '/v2/data-ingestion/jobs'), FULL);
      assert.equal(assertExactError(await ask(), 507, '/v2/query'), FULL);
      assert.match(assertExactError(await lore!.request('GET', '/readyz'), 503, '/readyz'), READYZ_FULL);

      await disk.empty();
      assert.equal((await lore!.request('GET', '/readyz')).status, 200);
      assert.deepEqual(await entries(), expectedEntries(stored, records.slice(0, 50)));
      const answer = await ask();
      assert.equal(answer.status, 200, answer.text);
      const job = await ingest(lore!, token, kb, records.slice(50, 60));
      assert.equal(job.status, 'completed');
      assert.deepEqual(await entries(), expectedEntries(stored, records.slice(0, 60)));
    });

    test('a restart on a full disk says "the disk holding DATA_DIR is full: N bytes free" and exits 1; with space back it starts with its data', async () => {
      await lore!.close();
      lore = undefined;
      const env = { DATA_DIR: dataDir, TOKEN_SECRET: 'test-token-secret-0123456789-0123456789', ADMIN_API_KEY: ADMIN_KEY, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
      // Not a byte free, lore's own lock file cannot be written; with one 4 KB page, PostgreSQL's
      // (postmaster.pid) cannot, and PGlite only says it "failed to initialize properly".
      for (const leave of [0, 4096]) {
        await disk.fill('filler', leave);
        const started = await runLore(['start'], { env, cwd }, 120_000);
        assert.equal(started.code, 1, started.stderr);
        const said = new RegExp(`^lore: The disk holding DATA_DIR is full: (\\d+) bytes free at ${dataDir}/pgdata\\. .*No space left on device`, 'im');
        const [, free] = said.exec(started.stderr) ?? assert.fail(started.stderr);
        assert.ok(Number(free) <= leave, `${free} bytes free, ${leave} left`);
        await disk.empty();
      }
      lore = await startTestServerOn({ env: { DATA_DIR: dataDir }, drop: async () => undefined });
      assert.equal((await lore.request('GET', '/readyz')).status, 200);
      assert.deepEqual(await entries(), expectedEntries(stored, records.slice(0, 60)));
    });
  });
}
