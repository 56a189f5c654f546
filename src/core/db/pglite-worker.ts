/**
 * The thread that owns the embedded database (see pglite-thread.ts): opens PGlite, runs the
 * statements and transactions the main thread sends, and answers each request by its id.
 */
import { parentPort } from 'node:worker_threads';
import { parse, PGlite, protocol, type Transaction } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import type { QueryResult } from './db.ts';
import { NativeVectors, type VectorSearchRequest } from './pglite-vectors.ts';
import { TransactionGate } from './transaction-gate.ts';
import { VECTOR_SEARCH_SETTINGS } from './vector-search-defaults.ts';
import { vectorBytes } from './vector-parameter.ts';

/** `tx`: the id of the transaction a statement belongs to (the id of the request that began it). */
export type PgliteRequest =
  | { kind: 'open'; dataDir: string }
  | { kind: 'query'; tx?: number; text: string; values: readonly unknown[]; prepare?: boolean }
  | { kind: 'exec'; tx?: number; text: string }
  | { kind: 'vectors'; search: VectorSearchRequest }
  | { kind: 'vector-graphs'; settled: boolean }
  | { kind: 'begin' }
  | { kind: 'commit' | 'rollback'; tx: number }
  | { kind: 'close' };

/** An error as it crosses threads: structured clone keeps only an Error's name, message and stack. */
export type ThreadError = { message: string; stack?: string; fields: Record<string, unknown> };

export type PgliteMessage = { id: number; request: PgliteRequest };
export type PgliteReply = { id: number; value?: unknown } | { id: number; error: ThreadError };

type OpenTransaction = { tx: Transaction; finish(commit: boolean): void; done: Promise<void> };

const port = parentPort!;
let pglite: PGlite | undefined;
const transactions = new Map<number, OpenTransaction>();
const gate = new TransactionGate();
const vectors = new NativeVectors(database, (text, values) => queryBound(database(), text, values));
// Rejects a transaction's callback so that PGlite rolls it back; only ever seen here.
const ROLLBACK = Symbol('rollback');

// PGlite binds a parameter as binary when the serializer of its type returns bytes. Vector's type
// id is the database's own: read on the connection or transaction of the first statement that
// binds a vector (a root read would wait for that transaction), and kept once read.
let vectorSerializers: Record<number, (value: unknown) => string> | undefined;

async function serializersFor(target: PGlite | Transaction, values: readonly unknown[]) {
  if (!values.some((value) => value instanceof Float32Array)) return undefined;
  if (!vectorSerializers) {
    const { rows } = await target.query<{ oid: number }>("SELECT 'vector'::regtype::oid AS oid");
    // PGlite's own serializers turn values into text; bytes are bound as they are.
    vectorSerializers = { [rows[0]!.oid]: (value) => (value instanceof Float32Array ? vectorBytes(value) : String(value)) as string };
  }
  return vectorSerializers;
}

/** A statement through PGlite's own `query`, with its vectors bound in binary. */
async function queryBound<T>(target: PGlite | Transaction, text: string, values: readonly unknown[]) {
  const serializers = await serializersFor(target, values);
  return target.query<T>(text, values as unknown[], serializers && { serializers });
}

// PGlite runs each statement as an unnamed one: parse, describe, bind, execute, every time. A
// statement marked `prepare` is parsed once as a named statement of PGlite's one session, with its
// parameter types, and then only bound and executed, as PGlite's own `query` does it otherwise:
// the server keeps its plan as for any prepared statement. A prepared statement is not undone by a
// rollback; it lasts as long as the database is open.
type NamedStatement = { name: string; parameterTypes: number[] };
const namedStatements = new Map<string, NamedStatement>();
// Names are never reused, even of a statement whose parse failed.
let statementsNamed = 0;

/**
 * Runs `text` as a named statement, under the locks PGlite's `query` takes: the transaction lock
 * for a statement outside a transaction (it waits for an open one), and the statement lock.
 */
async function runNamed(inTransaction: boolean, text: string, values: readonly unknown[], serializers: Record<number, (value: unknown) => string> | undefined) {
  const pg = database();
  const run = () =>
    pg.runExclusive(async () => {
      const exchange = (message: Uint8Array) => pg.execProtocolStream(message, { syncToFs: false });
      const messages: Awaited<ReturnType<PGlite['execProtocolStream']>> = [];
      try {
        let statement = namedStatements.get(text);
        if (!statement) {
          const name = `lore_${(statementsNamed += 1)}`;
          await exchange(protocol.serialize.parse({ name, text }));
          const parameterTypes = parse.parseDescribeStatementResults(await exchange(protocol.serialize.describe({ type: 'S', name })));
          namedStatements.set(text, (statement = { name, parameterTypes }));
        }
        const { name, parameterTypes } = statement;
        const bound = values.map((value, index) => {
          if (value === null || value === undefined) return null;
          const serialize = serializers?.[parameterTypes[index]!] ?? pg.serializers[parameterTypes[index]!];
          return serialize ? serialize(value) : String(value);
        });
        messages.push(
          ...(await exchange(protocol.serialize.bind({ statement: name, values: bound }))),
          ...(await exchange(protocol.serialize.describe({ type: 'P' }))),
          ...(await exchange(protocol.serialize.execute({}))),
        );
      } finally {
        messages.push(...(await exchange(protocol.serialize.sync())));
      }
      if (!inTransaction) await pg.syncToFs();
      return parse.parseResults(messages, pg.parsers)[0]!;
    });
  return inTransaction ? run() : pg._runExclusiveTransaction(run);
}

function database(): PGlite {
  if (!pglite) throw new Error('The embedded database is not open.');
  return pglite;
}

function transaction(tx: number): Transaction {
  const open = transactions.get(tx);
  if (!open) throw new Error('The transaction has already ended.');
  return open.tx;
}

/**
 * Opens a transaction with PGlite's own `transaction()`: it holds PGlite's transaction lock until
 * the main thread commits or rolls back, so root statements wait meanwhile, as they did when
 * PGlite ran on the main thread. Resolves once BEGIN has run.
 */
function begin(id: number): Promise<void> {
  return new Promise((started, failed) => {
    let finish!: (commit: boolean) => void;
    const ended = new Promise<void>((resolve, reject) => {
      finish = (commit) => (commit ? resolve() : reject(ROLLBACK));
    });
    const done = database().transaction(async (tx) => {
      transactions.set(id, { tx, finish, done });
      started();
      await ended;
    });
    // Only a failed BEGIN lands here before `started`; later outcomes go to commit or rollback.
    done.catch(failed);
  });
}

async function end(tx: number, commit: boolean): Promise<void> {
  const open = transactions.get(tx);
  if (!open) throw new Error('The transaction has already ended.');
  transactions.delete(tx);
  open.finish(commit);
  await open.done.catch((error: unknown) => {
    if (error !== ROLLBACK) throw error;
  });
}

// PGlite's own error for a start that failed is "PGlite failed to initialize properly"; the cause
// is in what PostgreSQL printed before it, e.g. `FATAL:  could not write lock file
// "postmaster.pid": No space left on device` on a full disk. Its FATAL and PANIC lines are kept
// (the last 5) until the database is open.
const serverFailures: string[] = [];
const SERVER_FAILURE = /\b(FATAL|PANIC):\s+(.*)$/;

function noteServerLog(text: string): boolean {
  const failure = SERVER_FAILURE.exec(text);
  if (failure && !pglite) {
    serverFailures.push(`${failure[1]}: ${failure[2]}`);
    if (serverFailures.length > 5) serverFailures.shift();
  }
  return false;
}

/** A failed start's error with PostgreSQL's reasons appended to its message. */
function withServerFailures(error: unknown): unknown {
  if (!(error instanceof Error) || serverFailures.length === 0) return error;
  error.message = `${error.message} (PostgreSQL: ${serverFailures.join('; ')})`;
  serverFailures.length = 0;
  return error;
}

async function handle(id: number, request: PgliteRequest): Promise<unknown> {
  switch (request.kind) {
    case 'open':
      pglite = await PGlite.create({ dataDir: request.dataDir, extensions: { vector }, onStderr: noteServerLog }).catch((error: unknown) => {
        throw withServerFailures(error);
      });
      serverFailures.length = 0;
      namedStatements.clear();
      // PGlite is one session: what is set here holds for every later statement.
      await pglite.exec(VECTOR_SEARCH_SETTINGS);
      await vectors.opened();
      return undefined;
    case 'query': {
      const { tx, text, values, prepare } = request;
      const run = async () => {
        const target = tx === undefined ? database() : transaction(tx);
        if (prepare) return runNamed(tx !== undefined, text, values, await serializersFor(target, values));
        return queryBound<Record<string, unknown>>(target, text, values);
      };
      const result = await (tx === undefined ? gate.statement(run) : run());
      // PGlite reports affectedRows 0 for a SELECT, where pg reports the rows returned.
      return { rows: result.rows, rowCount: Math.max(result.affectedRows ?? 0, result.rows.length) } satisfies QueryResult<unknown>;
    }
    case 'exec': {
      const { tx, text } = request;
      const run = () => (tx === undefined ? database() : transaction(tx)).exec(text);
      await (tx === undefined ? gate.statement(run) : run());
      return undefined;
    }
    case 'vectors':
      // A search waits, and counts, as a statement outside a transaction: a job's next record waits for it.
      return gate.statement(() => vectors.search(request.search));
    case 'vector-graphs':
      return vectors.status(request.settled);
    case 'begin':
      await gate.turn();
      await begin(id);
      return id;
    case 'commit':
    case 'rollback':
      await end(request.tx, request.kind === 'commit');
      if (request.kind === 'commit') vectors.committed();
      return undefined;
    case 'close':
      await pglite?.close();
      return undefined;
  }
}

/**
 * PGlite's DatabaseError carries PostgreSQL's fields (code, detail, constraint, ...) as own
 * properties; they travel as plain values. The statement and its parameters stay behind: the
 * main thread puts back the ones it sent instead of receiving a copy.
 */
function describe(error: unknown): ThreadError {
  if (!(error instanceof Error)) return { message: String(error), fields: {} };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    if (key === 'query' || key === 'params' || key === 'queryOptions') continue;
    if (value === undefined || value === null || ['string', 'number', 'boolean'].includes(typeof value)) fields[key] = value;
  }
  return { message: error.message, stack: error.stack, fields: { name: error.name, ...fields } };
}

port.on('message', ({ id, request }: PgliteMessage) => {
  handle(id, request).then(
    (value) => {
      try {
        port.postMessage({ id, value } satisfies PgliteReply);
      } catch (error) {
        // A value structured clone cannot copy fails its request, not the thread.
        port.postMessage({ id, error: describe(error) } satisfies PgliteReply);
      }
    },
    (error: unknown) => port.postMessage({ id, error: describe(error) } satisfies PgliteReply),
  );
});
