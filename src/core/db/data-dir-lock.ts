import { open, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';

/**
 * The embedded database is one process's: PGlite keeps its pages in that process's memory, so
 * a second process opening the same directory (`lore admin` beside `lore start`) would write to
 * a copy that the first one overwrites, and its writes would silently vanish.
 */
export class DataDirInUseError extends Error {
  constructor(dataDir: string, owner: LockOwner) {
    super(
      `The embedded database in ${dataDir} is in use by another lore process (pid ${owner.pid}, \`lore ${owner.command}\` since ${owner.since}). ` +
        'Stop that process first, or make the change through its HTTP API (the admin API with ADMIN_API_KEY).',
    );
    this.name = 'DataDirInUseError';
  }
}

type LockOwner = { pid: number; host: string; command: string; since: string };

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readOwner(path: string): Promise<LockOwner | undefined> {
  try {
    const owner = JSON.parse(await readFile(path, 'utf8')) as Partial<LockOwner>;
    return typeof owner.pid === 'number' ? (owner as LockOwner) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the lock file `path` for this process, or throws `DataDirInUseError` while a live process
 * holds it. A PID file rather than an OS lock (Node has no flock): the lock of a process killed
 * with SIGKILL is stale at once, as its PID no longer runs, so a restart right after a crash
 * proceeds. A file from another host (a shared volume) is trusted as held.
 */
export async function lockDataDir(path: string, dataDir: string): Promise<() => Promise<void>> {
  // The command's first words (`start`, `admin client`) tell the operator which process it is;
  // later arguments could carry values that do not belong in a file.
  const command = process.argv.slice(2, 4).join(' ');
  const self: LockOwner = { pid: process.pid, host: hostname(), command, since: new Date().toISOString() };
  const content = `${JSON.stringify(self)}\n`;
  try {
    const file = await open(path, 'wx');
    await file.writeFile(content);
    await file.close();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const owner = await readOwner(path);
    const held = owner && owner.pid !== process.pid && (owner.host !== self.host || isAlive(owner.pid));
    if (held) throw new DataDirInUseError(dataDir, owner);
    await writeFile(path, content);
  }
  return async () => {
    const owner = await readOwner(path);
    if (owner?.pid === process.pid && owner.host === self.host) await rm(path, { force: true });
  };
}
