/**
 * Runs the real `lore` command (`node bin/lore.js ...`) as a child process, the way an operator
 * does, for the tests of the command line and of the first start.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const loreBin = fileURLToPath(new URL('../bin/lore.js', import.meta.url));

/** How a child process ended. */
export type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** A finished `lore` command with everything it printed. */
export type Finished = Exit & { stdout: string; stderr: string };

/** Where and with what a `lore` child runs. */
export type LoreOptions = {
  /** Exactly the variables the child sees besides PATH and the shared MODELS_DIR, so nothing else of the caller's environment leaks in. */
  env: Record<string, string>;
  /** The working directory: a temp directory, so that no `.env` of the repository is read. */
  cwd: string;
};

function childEnv(options: LoreOptions): NodeJS.ProcessEnv {
  // The token table scripts/run-tests.js prepared once; a test may still name another directory.
  const models = process.env.MODELS_DIR ? { MODELS_DIR: process.env.MODELS_DIR } : {};
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', ...models, ...options.env };
}

// Creating and migrating a fresh embedded database costs about 15 s of CPU; on a 2-core machine
// busy with other test files that was 56 s of wall time, hence the generous limits below.

/** Runs `lore ...args` to its end (killed and failed after `timeoutMs`). */
export function runLore(args: string[], options: LoreOptions, timeoutMs = 150_000): Promise<Finished> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [loreBin, ...args],
      { env: childEnv(options), cwd: options.cwd, timeout: timeoutMs, killSignal: 'SIGKILL' },
      (error, stdout, stderr) => {
        if (error?.killed) reject(new Error(`lore ${args.join(' ')} did not finish within ${timeoutMs} ms; stderr:\n${stderr}`));
        else if (error && typeof error.code !== 'number') reject(error);
        else resolve({ code: error ? (error.code as number) : 0, signal: error?.signal ?? null, stdout, stderr });
      },
    );
  });
}

/** A loopback port that was free a moment ago, for a server whose address the test must know. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** A running `lore start`, with its output so far. Always `kill()` it in an `after` hook. */
export class LoreServer {
  stdout = '';
  stderr = '';
  private exit: Exit | undefined;
  private readonly exited: Promise<Exit>;
  private readonly listeners = new Set<() => void>();

  private constructor(private readonly child: ChildProcess) {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
      this.notify();
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        this.notify();
        resolve(this.exit);
      });
    });
  }

  /** Spawns `lore start`. */
  static start(options: LoreOptions): LoreServer {
    return LoreServer.spawn(['start'], options);
  }

  /** Spawns a long-running `lore` command (`start`, `worker`). */
  static spawn(args: string[], options: LoreOptions): LoreServer {
    return new LoreServer(spawn(process.execPath, [loreBin, ...args], { env: childEnv(options), cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] }));
  }

  /** The child's process id, for signals such as SIGSTOP and SIGCONT. */
  get pid(): number {
    return this.child.pid!;
  }

  /** How the process ended, or undefined while it runs. */
  get exitStatus(): Exit | undefined {
    return this.exit;
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }

  /** The JSON log lines printed so far (stdout also carries the plain-text first-start block). */
  logs(): Array<Record<string, unknown>> {
    return this.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  /**
   * Resolves with what `find` extracts from stdout once it extracts something; fails with `what`
   * and the output so far when the process ends first or `timeoutMs` passes.
   */
  waitFor<T>(what: string, find: (stdout: string) => T | undefined, timeoutMs: number): Promise<T> {
    return new Promise((resolve, reject) => {
      const finish = (outcome: () => void) => {
        clearTimeout(timer);
        this.listeners.delete(check);
        outcome();
      };
      const failure = (reason: string) => new Error(`${reason} while waiting for ${what}.\nstdout:\n${this.stdout}\nstderr:\n${this.stderr}`);
      const check = () => {
        const found = find(this.stdout);
        if (found !== undefined) finish(() => resolve(found));
        else if (this.exit) finish(() => reject(failure(`lore start exited (${JSON.stringify(this.exit)})`)));
      };
      const timer = setTimeout(() => finish(() => reject(failure(`${timeoutMs} ms passed`))), timeoutMs);
      this.listeners.add(check);
      check();
    });
  }

  /** Waits for the "lore is listening" log line and returns the base URL it names. */
  listening(timeoutMs = 120_000): Promise<string> {
    return this.waitFor(
      'the "lore is listening" log line',
      () => this.logs().find((line) => line.msg === 'lore is listening')?.url as string | undefined,
      timeoutMs,
    );
  }

  /** Sends SIGTERM and resolves with how the process ended; fails when it is still running after `timeoutMs`. */
  async stop(timeoutMs = 30_000): Promise<Exit> {
    if (!this.exit) this.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`lore start still runs ${timeoutMs} ms after SIGTERM.\nstderr:\n${this.stderr}`)), timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ends the process whatever its state, for `after` hooks that run even when a test failed. */
  async kill(): Promise<void> {
    if (this.exit) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }
}

/** An HTTP answer from a `lore start` child, its body decoded when it is JSON. */
export type Reply = { status: number; body: any };

/** Sends a request to a `lore start` child: a JSON body, a bearer token, or a form. */
export async function send(
  method: string,
  url: string,
  options: { token?: string; json?: unknown; form?: Record<string, string> } = {},
): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | URLSearchParams | undefined;
  if (options.form) body = new URLSearchParams(options.form);
  else if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  const response = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(15_000) });
  const text = await response.text();
  return { status: response.status, body: response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
}
