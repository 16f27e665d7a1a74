import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';

const run = promisify(execFile);

export interface SmallDisk {
  /** A fresh directory holding the mount point, `name`, and nothing else. */
  readonly root: string;
  /** The mount point. */
  readonly dir: string;
  /** Writes filler files until the file system has not one page left. */
  fill(): Promise<void>;
  /** Deletes the filler: the space is back. */
  free(): Promise<void>;
}

/**
 * A tmpfs of `size` (mount's syntax, `96m`) mounted at `root/name` for the enclosing suite
 * (`name` = `pg` puts an embedded Cairn's PGlite on it, with DATA_DIR = `root`), and unmounted
 * after it even when a test failed. Mounting needs root, as CI runs: anywhere else the suite fails
 * with mount's own message rather than pass without having filled a disk.
 */
export function useSmallDisk(size: string, name = 'disk'): SmallDisk {
  let root = '';
  let dir = '';
  let mounted = false;
  const fillers: string[] = [];
  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-small-disk-'));
    // Servers run as their own users (`postgres`) and must reach the mount point.
    await fs.chmod(root, 0o755);
    dir = path.join(root, name);
    await fs.mkdir(dir);
    await run('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0777`, 'tmpfs', dir]);
    mounted = true;
  });
  afterAll(async () => {
    if (mounted) await run('umount', ['--lazy', dir]);
    if (root) await fs.rm(root, { recursive: true, force: true });
  });
  return {
    get root() {
      return root;
    },
    get dir() {
      return dir;
    },
    async fill() {
      // Big chunks first, then single pages: tmpfs hands out 4 KiB pages.
      for (const chunk of [1 << 20, 4096]) {
        const file = path.join(dir, `filler-${fillers.length}`);
        fillers.push(file);
        const handle = await fs.open(file, 'w');
        const bytes = Buffer.alloc(chunk);
        try {
          for (;;) await handle.write(bytes);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
        } finally {
          await handle.close();
        }
      }
    },
    async free() {
      for (const file of fillers.splice(0)) await fs.rm(file, { force: true });
    },
  };
}
