/**
 * A PostgreSQL 15 cluster of one test file's own, on a free loopback port, that the test may stop,
 * start and restart at will (the shared server on 5432 must never be touched). It uses Debian's
 * cluster tools (`pg_createcluster`, `pg_ctlcluster`, `pg_dropcluster`), so it needs root or the
 * postgres user, and pgvector installed for version 15.
 */
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { freePort } from './lore-process.ts';

const run = promisify(execFile);
const VERSION = '15';
const NAME_PREFIX = 'lore_chaos_';

// Settings appended to the cluster's postgresql.conf (the last occurrence of a setting wins, and
// pg_dropcluster removes the file with the cluster). fsync is off because nothing here survives
// an OS crash anyway and it spares the shared 2-core machine's disk; 200 connections leave room
// for three lore processes with pools of 10 and the test's own clients.
const SETTINGS = `
listen_addresses = '127.0.0.1'
fsync = off
full_page_writes = off
max_connections = 200
shared_buffers = 64MB
`;

async function tool(command: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run(command, args, { timeout: 60_000 });
    return stdout;
  } catch (error) {
    const failure = error as Error & { stderr?: string; stdout?: string };
    throw new Error(`${command} ${args.join(' ')} failed: ${failure.message}\n${failure.stderr ?? ''}${failure.stdout ?? ''}`, { cause: error });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Drops clusters left by earlier test processes that died before their `after` hook ran. */
async function dropStaleClusters(): Promise<void> {
  const listing = await tool('pg_lsclusters', ['--no-header']);
  for (const line of listing.split('\n')) {
    const [version, name] = line.trim().split(/\s+/);
    const owner = name?.startsWith(NAME_PREFIX) ? Number(name.slice(NAME_PREFIX.length).split('_')[0]) : NaN;
    if (version === VERSION && Number.isInteger(owner) && !isAlive(owner)) {
      await tool('pg_dropcluster', ['--stop', VERSION, name!]).catch(() => undefined);
    }
  }
}

/** A private PostgreSQL cluster with trust authentication on 127.0.0.1. Always `drop()` it in `after`. */
export class PrivatePostgres {
  private dropped = false;
  private readonly dropAtExit = () => {
    // Last resort when the test process exits without its `after` hook (a timeout, an uncaught error).
    if (!this.dropped) spawnSync('pg_dropcluster', ['--stop', VERSION, this.name], { stdio: 'ignore', timeout: 30_000 });
  };

  private constructor(
    /** The cluster's name, `lore_chaos_<pid>_<random>`. */
    readonly name: string,
    /** The port it listens on, on 127.0.0.1. */
    readonly port: number,
  ) {
    process.once('exit', this.dropAtExit);
  }

  /** Creates a cluster on a free port, starts it and waits until it accepts connections. */
  static async create(): Promise<PrivatePostgres> {
    await dropStaleClusters();
    const name = `${NAME_PREFIX}${process.pid}_${randomBytes(4).toString('hex')}`;
    const port = await freePort();
    await tool('pg_createcluster', [VERSION, name, '-p', String(port), '--start-conf=manual', '--', '--auth=trust']);
    const cluster = new PrivatePostgres(name, port);
    try {
      await appendFile(`/etc/postgresql/${VERSION}/${name}/postgresql.conf`, SETTINGS);
      await cluster.start();
    } catch (error) {
      await cluster.drop();
      throw error;
    }
    return cluster;
  }

  /** The connection string of the `postgres` database as the superuser, with optional query parameters. */
  url(parameters: Record<string, string> = {}): string {
    const query = new URLSearchParams(parameters).toString();
    return `postgres://postgres@127.0.0.1:${this.port}/postgres${query ? `?${query}` : ''}`;
  }

  /** Starts the cluster and waits until it accepts connections. */
  async start(): Promise<void> {
    await tool('pg_ctlcluster', [VERSION, this.name, 'start']);
    await this.ready();
  }

  /** Stops the cluster in fast mode: open connections are terminated, as in a real outage. */
  async stop(): Promise<void> {
    await tool('pg_ctlcluster', ['--mode', 'fast', VERSION, this.name, 'stop']);
  }

  /** Restarts the cluster (fast stop, then start) and waits until it accepts connections. */
  async restart(): Promise<void> {
    await tool('pg_ctlcluster', ['--mode', 'fast', VERSION, this.name, 'restart']);
    await this.ready();
  }

  /** Waits until `pg_isready` reports that the cluster accepts connections, failing after `timeoutMs`. */
  async ready(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      const probe = await run('pg_isready', ['-h', '127.0.0.1', '-p', String(this.port), '-t', '2']).then(
        () => undefined,
        (error: Error & { stdout?: string }) => error.stdout ?? error.message,
      );
      if (probe === undefined) return;
      last = probe;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`cluster ${this.name} on port ${this.port} not ready after ${timeoutMs} ms: ${last}`);
  }

  /** Stops and removes the cluster with its data, configuration and log; safe to call twice. */
  async drop(): Promise<void> {
    if (this.dropped) return;
    await tool('pg_dropcluster', ['--stop', VERSION, this.name]);
    this.dropped = true;
    process.off('exit', this.dropAtExit);
  }
}
