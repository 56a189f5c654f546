/**
 * The embedded engine on its own thread answers like PGlite on the main thread did: the same row
 * types, errors with PostgreSQL's fields, transactions that commit, roll back and hold other
 * statements back; and a thread that dies turns into 503s instead of ending the process.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { engine } from '../../../test/harness.ts';
import type { Db } from './db.ts';
import { openPglite } from './pglite.ts';
import { PgliteThread } from './pglite-thread.ts';
import { DatabaseUnavailableError, isConnectionFailure } from './unavailable.ts';

// These open PGlite themselves, whichever engine the run is for: once is enough.
if (engine === 'pglite') {
  describe('the embedded engine on its own thread', () => {
    let db: Db;
    before(async () => {
      db = await openPglite('memory://');
      await db.exec(`CREATE EXTENSION IF NOT EXISTS vector;
        CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL, tags text[], data jsonb, at timestamptz DEFAULT now(),
          blob bytea, embedding vector(3), score float8, amount numeric)`);
    });
    after(() => db.close());

    test('rows keep the JavaScript types PGlite returns', async () => {
      const { rows, rowCount } = await db.query(
        `INSERT INTO notes (id, body, tags, data, blob, embedding, score, amount) VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8)
         RETURNING *, (SELECT count(*) FROM notes) AS before`,
        [1, 'first', ['a', 'b'], JSON.stringify({ nested: [1, { deep: null }] }), new Uint8Array([1, 2]), '[1,2,3]', 0.5, '12.50'],
      );
      assert.equal(rowCount, 1);
      const [row] = rows;
      assert.ok(row!.at instanceof Date);
      assert.deepEqual({ ...row, at: undefined }, {
        id: 1,
        body: 'first',
        tags: ['a', 'b'],
        data: { nested: [1, { deep: null }] },
        at: undefined,
        blob: new Uint8Array([1, 2]),
        embedding: '[1,2,3]',
        score: 0.5,
        amount: '12.50',
        before: 0,
      });
      // A SELECT counts the rows it returns, as pg does.
      assert.equal((await db.query('SELECT id FROM notes')).rowCount, 1);
    });

    test('errors arrive as Errors with the fields of PostgreSQL and the statement', async () => {
      const values = [1, 'again'];
      const error = await db.query('INSERT INTO notes (id, body) VALUES ($1, $2)', values).then(
        () => assert.fail('a duplicate key was accepted'),
        (thrown: unknown) => thrown as Record<string, unknown>,
      );
      assert.ok(error instanceof Error);
      assert.equal(error.message, 'duplicate key value violates unique constraint "notes_pkey"');
      assert.equal(error.code, '23505');
      assert.equal(error.constraint, 'notes_pkey');
      assert.equal(error.detail, 'Key (id)=(1) already exists.');
      assert.equal(error.table, 'notes');
      assert.equal(error.severity, 'ERROR');
      assert.equal(error.query, 'INSERT INTO notes (id, body) VALUES ($1, $2)');
      assert.equal(error.params, values);
      assert.equal(isConnectionFailure(error), false);
      await assert.rejects(db.exec('SELECT no_such_column FROM notes'), { code: '42703', query: 'SELECT no_such_column FROM notes' });
    });

    test('a transaction commits what its work wrote and returns what the work returned', async () => {
      const count = await db.transaction(async (tx) => {
        await tx.query("INSERT INTO notes (id, body) VALUES (2, 'second')");
        await tx.exec("INSERT INTO notes (id, body) VALUES (3, 'third')");
        return (await tx.query<{ count: number }>('SELECT count(*)::int AS count FROM notes')).rows[0]!.count;
      });
      assert.equal(count, 3);
      assert.deepEqual((await db.query('SELECT id FROM notes ORDER BY id')).rows, [{ id: 1 }, { id: 2 }, { id: 3 }]);
    });

    test('a transaction whose work throws is rolled back, and the work’s error is the one thrown', async () => {
      const failure = new Error('the work failed');
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.query("INSERT INTO notes (id, body) VALUES (4, 'fourth')");
          throw failure;
        }),
        (error) => error === failure,
      );
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.query("INSERT INTO notes (id, body) VALUES (5, 'fifth')");
          await tx.query("INSERT INTO notes (id, body) VALUES (1, 'duplicate')");
        }),
        { code: '23505' },
      );
      assert.deepEqual((await db.query('SELECT id FROM notes WHERE id > 3')).rows, []);
    });

    test('statements outside a transaction wait until it ends', async () => {
      const order: string[] = [];
      let opened!: () => void;
      const isOpen = new Promise<void>((resolve) => (opened = resolve));
      const transaction = db.transaction(async (tx) => {
        await tx.query("INSERT INTO notes (id, body) VALUES (6, 'sixth')");
        opened();
        await new Promise((resolve) => setTimeout(resolve, 200));
        order.push('transaction');
      });
      await isOpen;
      const outside = db.query<{ id: number }>('SELECT id FROM notes WHERE id = 6').then(({ rows }) => order.push(`outside saw ${rows.length}`));
      await Promise.all([transaction, outside]);
      assert.deepEqual(order, ['transaction', 'outside saw 1']);
    });

    test('it tells when a question’s statement was last sent, and only a question’s (write-groups.ts)', async () => {
      const before = db.lastQuestion!();
      // A job's poll or its own statements, in a transaction or not, are not questions.
      await db.query('SELECT 1', [], { prepare: true });
      await db.transaction((tx) => tx.query('SELECT 1'));
      assert.equal(db.lastQuestion!(), before);

      const sent = performance.now();
      const question = db.query('SELECT 2', [], { question: true });
      const asked = db.lastQuestion!();
      assert.ok(asked >= sent && asked <= performance.now(), 'the time the question was sent');
      await question;
      await db.query('SELECT 3');
      assert.equal(db.lastQuestion!(), asked);

      // A question's statement in a transaction (a search deeper than the session's ef_search) counts too.
      const inTransaction = performance.now();
      await db.transaction((tx) => tx.query('SELECT 4', [], { question: true }));
      assert.ok(db.lastQuestion!() >= inTransaction, 'a question in a transaction is a question');
    });

    test('statements outside transactions go before a transaction that has not begun (transaction-gate.ts)', async () => {
      const order: string[] = [];
      const first = db.query('SELECT pg_sleep(0.2)').then(() => order.push('first statement'));
      await new Promise((resolve) => setTimeout(resolve, 10));
      const transaction = db.transaction(async () => order.push('transaction'));
      await new Promise((resolve) => setTimeout(resolve, 20));
      const second = db.query('SELECT 1').then(() => order.push('second statement'));
      await Promise.all([first, transaction, second]);
      assert.deepEqual(order, ['first statement', 'second statement', 'transaction']);
    });

    test('sessions start with the vector search defaults the query path relies on', async () => {
      assert.deepEqual(db.vectorSearchDefaults, { efSearch: 75 });
      const { rows } = await db.query("SELECT current_setting('hnsw.ef_search') AS ef_search, current_setting('hnsw.iterative_scan') AS scan");
      assert.deepEqual(rows, [{ ef_search: '75', scan: 'relaxed_order' }]);
    });
  });

  describe('the embedded engine’s thread dies or closes', () => {
    let dir: string;
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'lore-pglite-'));
    });
    after(() => rm(dir, { recursive: true, force: true }));

    test('pending and later calls reject with DatabaseUnavailableError, which the HTTP layer answers 503', async () => {
      const thread = new PgliteThread();
      await thread.call({ kind: 'open', dataDir: 'memory://' });
      const pending = thread.call({ kind: 'query', text: 'SELECT pg_sleep(5)', values: [] });
      await thread.terminate();
      await assert.rejects(pending, (error) => error instanceof DatabaseUnavailableError && isConnectionFailure(error));
      await assert.rejects(thread.call({ kind: 'query', text: 'SELECT 1', values: [] }), DatabaseUnavailableError);
    });

    test('close ends the thread and releases the data directory', async () => {
      const dataDir = join(dir, 'pgdata');
      const db = await openPglite(dataDir);
      assert.ok(existsSync(`${dataDir}.lock`));
      await db.close();
      assert.equal(existsSync(`${dataDir}.lock`), false);
      await assert.rejects(db.query('SELECT 1'), /closed/);
    });
  });
}
