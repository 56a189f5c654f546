/**
 * A redis-server of one test file's own, on a free loopback port, that the test may stop
 * (SIGSTOP: it keeps its connections and answers nothing) and continue at will; the shared server
 * on 6379 must never be touched. Nothing is persisted (`--save ""`, no append-only file).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from './lore-process.ts';

export class PrivateRedis {
  private readonly killAtExit = () => this.child.kill('SIGKILL');

  private constructor(
    private readonly child: ChildProcess,
    /** The port it listens on, on 127.0.0.1. */
    readonly port: number,
    /** The test's own connection, for reading what lore wrote. */
    readonly client: Redis,
  ) {
    process.once('exit', this.killAtExit);
  }

  /** Starts a server on a free port and waits until it answers PING. */
  static async start(): Promise<PrivateRedis> {
    const port = await freePort();
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => 50 });
    // Refused until the server listens: the loop below retries, and a failed call rejects anyway.
    client.on('error', () => undefined);
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        await client.connect();
        await client.ping();
        break;
      } catch (error) {
        if (Date.now() > deadline) {
          child.kill('SIGKILL');
          throw new Error(`redis-server on port ${port} did not answer within 10 s`, { cause: error });
        }
        client.disconnect();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    return new PrivateRedis(child, port, client);
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Freezes the server: connections stay open, nothing is answered. */
  stop(): void {
    this.child.kill('SIGSTOP');
  }

  /** Lets a stopped server go on. */
  resume(): void {
    this.child.kill('SIGCONT');
  }

  /** Every key matching `pattern`, sorted, through SCAN (never KEYS). */
  async keys(pattern: string): Promise<string[]> {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await this.client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      found.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    return found.sort();
  }

  /** Stops the server (continued first, should it be stopped) and waits for its exit. */
  async close(): Promise<void> {
    process.removeListener('exit', this.killAtExit);
    this.client.disconnect();
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGCONT');
    this.child.kill('SIGTERM');
    await exited;
  }
}
