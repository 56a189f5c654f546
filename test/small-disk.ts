/**
 * A real small file system of a test's own (tmpfs, mounted as root), which the test fills to the
 * last byte and empties again: how a full disk is reproduced without touching the machine's own.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, open, rm, rmdir, statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

// Filled in steps of 1 MB, then of one 4 KB page (tmpfs's block size) for the last bytes.
const STEPS = [2 ** 20, 4096];

/** A mounted tmpfs. Always `unmount()` it in an `after` hook; a process that dies first unmounts it at exit. */
export class SmallDisk {
  private unmounted = false;
  private readonly unmountAtExit = () => {
    if (!this.unmounted) spawnSync('umount', ['--lazy', this.path], { stdio: 'ignore', timeout: 30_000 });
  };

  private constructor(
    /** Where it is mounted: an empty directory of its own. */
    readonly path: string,
  ) {
    process.once('exit', this.unmountAtExit);
  }

  /** Mounts a tmpfs of `megabytes` on a new temp directory. Needs root. */
  static async mount(megabytes: number): Promise<SmallDisk> {
    const path = await mkdtemp(join(tmpdir(), 'lore-small-disk-'));
    try {
      await run('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m,mode=0755`, 'tmpfs', path]);
    } catch (error) {
      await rmdir(path);
      throw new Error(`mounting a ${megabytes} MB tmpfs failed (the test needs root): ${(error as Error).message}`, { cause: error });
    }
    return new SmallDisk(path);
  }

  /** Bytes an unprivileged writer can still write. */
  async free(): Promise<number> {
    const stats = await statfs(this.path);
    return stats.bavail * stats.bsize;
  }

  /** Writes a file of filler until the disk is full (or until `leave` bytes are left), and returns its path. */
  async fill(name = 'filler', leave = 0): Promise<string> {
    const path = join(this.path, name);
    const file = await open(path, 'a');
    try {
      for (const step of STEPS) {
        const block = Buffer.alloc(step, 0x2e);
        while ((await this.free()) - step >= leave) {
          try {
            await file.write(block);
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
            break;
          }
        }
      }
    } finally {
      await file.close();
    }
    return path;
  }

  /** Removes a file written by `fill`: the space it took is free again. */
  async empty(name = 'filler'): Promise<void> {
    await rm(join(this.path, name), { force: true });
  }

  /** Unmounts it (with whatever is on it) and removes its directory; safe to call twice. */
  async unmount(): Promise<void> {
    if (this.unmounted) return;
    await run('umount', [this.path]).catch(() => run('umount', ['--lazy', this.path]));
    await rmdir(this.path);
    this.unmounted = true;
    process.off('exit', this.unmountAtExit);
  }
}
