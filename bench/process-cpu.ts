/**
 * CPU time spent while a load runs, in milliseconds: this process (the API server the benchmarks
 * start in-process, every thread of it: PGlite's, the encoder's) and, on PostgreSQL, the server
 * backends connected to the benchmark's database, read from /proc/<pid>/stat. The load generator
 * runs in a child process (query-load.ts), so neither count includes it.
 */
import { readFile } from 'node:fs/promises';
import pg from 'pg';

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in hundredths of a second. */
const TICK_MS = 10;
/**
 * Backends are sampled this often: the pool closes a connection idle for 10 s, and a backend that
 * exits between two samples loses only what it spent since the last one.
 */
const SAMPLE_MS = 250;

export type CpuSpent = { apiMs: number; databaseMs: number };

export type CpuMeter = { stop(): Promise<CpuSpent> };

/** utime + stime of a process in ms, or undefined once it has exited. */
export async function processCpuMs(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (!stat) return undefined;
  // The command name, in parentheses, may hold spaces: the fields are counted after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

/** Starts counting; `stop()` returns what was spent since. Without `databaseUrl` (PGlite) `databaseMs` is 0. */
export async function startCpuMeter(databaseUrl: string | undefined): Promise<CpuMeter> {
  const api = process.cpuUsage();
  if (!databaseUrl) {
    return {
      async stop() {
        const spent = process.cpuUsage(api);
        return { apiMs: (spent.user + spent.system) / 1000, databaseMs: 0 };
      },
    };
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  // Per backend: its CPU when first seen (a backend started during the load counts from 0) and last seen.
  const backends = new Map<number, { first: number; last: number }>();
  const sample = async (startedWithLoad: boolean) => {
    const { rows } = await client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    for (const { pid } of rows) {
      const ms = await processCpuMs(pid);
      if (ms === undefined) continue;
      const known = backends.get(pid);
      if (known) known.last = ms;
      else backends.set(pid, { first: startedWithLoad ? ms : 0, last: ms });
    }
  };
  await sample(true);
  let sampling = Promise.resolve();
  const timer = setInterval(() => (sampling = sampling.then(() => sample(false))), SAMPLE_MS);
  return {
    async stop() {
      clearInterval(timer);
      await sampling;
      await sample(false);
      await client.end();
      const spent = process.cpuUsage(api);
      let databaseMs = 0;
      for (const { first, last } of backends.values()) databaseMs += last - first;
      return { apiMs: (spent.user + spent.system) / 1000, databaseMs };
    },
  };
}

/** Busy and total CPU time of the whole machine so far, in USER_HZ ticks summed over its cores (/proc/stat). */
async function machineTicks(): Promise<{ busy: number; total: number }> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!;
  // cpu user nice system idle iowait irq softirq steal ...
  const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = ticks.reduce((sum, value) => sum + value, 0);
  return { busy: total - ticks[3]! - ticks[4]!, total };
}

/**
 * Starts counting the machine's CPU; `stop()` returns the share of all its cores that was busy
 * since (0 to 1), whatever process used it: what is left for another process, such as a second
 * `lore worker`, to use.
 */
export async function startMachineCpuMeter(): Promise<{ stop(): Promise<number> }> {
  const first = await machineTicks();
  return {
    async stop() {
      const last = await machineTicks();
      return (last.busy - first.busy) / Math.max(1, last.total - first.total);
    },
  };
}
