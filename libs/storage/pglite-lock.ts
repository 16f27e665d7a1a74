import fs from 'node:fs/promises';
import path from 'node:path';
import { OWNER_ONLY_DIR, OWNER_ONLY_FILE } from './owner-only.ts';

/** Another live process holds an embedded data directory. */
export class DataDirInUseError extends Error {
  override name = 'DataDirInUseError';
  readonly dir: string;
  readonly owner: number;
  constructor(dir: string, owner: number) {
    super(
      `The embedded database in ${dir} is in use by process ${owner} ` +
        '(is the Cairn server running on this DATA_DIR?). Stop it first, or point DATABASE_URL at a Postgres server.',
    );
    this.dir = dir;
    this.owner = owner;
  }
}

/**
 * PGlite is one Postgres backend writing its files directly, with no postmaster to stop a
 * second process: two processes on one data directory corrupt it. This lock file (holding the
 * owner's pid) makes the second one fail with a clear message instead. A lock left by a dead
 * process is taken over.
 */
export async function lockDataDir(file: string): Promise<() => Promise<void>> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: OWNER_ONLY_DIR });
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      await fs.writeFile(file, String(process.pid), { flag: 'wx', mode: OWNER_ONLY_FILE });
      return async () => {
        await fs.rm(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number((await fs.readFile(file, 'utf8').catch(() => '')).trim());
    // The same process may reopen its own directory (tests do); only other live processes block.
    if (owner === process.pid) return async () => {};
    if (owner > 0 && isAlive(owner))
      throw new DataDirInUseError(file.replace(/\.lock$/, ''), owner);
    await fs.rm(file, { force: true });
  }
  throw new Error(`Could not lock ${file}`);
}

/** Whether a process with this pid exists (one we may not signal exists too). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
