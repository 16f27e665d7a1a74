import { createWriteStream, type WriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';

/**
 * What Cairn keeps on disk (DATA_DIR, its engines' files, spools, backups) is the owner's
 * alone, whatever the umask it was started with: folders 0700, files 0600.
 *
 * ```ts
 * const spool = await ownerOnlyDir(path.join(config.dataDir, 'spool'));   // 0700
 * const out = createOwnerOnlyWriteStream(path.join(spool, `${id}.csv`));  // 0600, new file
 * await writeOwnerOnlyFile(path.join(spool, 'index.json'), text);         // 0600
 * ```
 */
export const OWNER_ONLY_DIR = 0o700;
export const OWNER_ONLY_FILE = 0o600;
const GROUP_AND_OTHER = 0o077;

/**
 * Files and folders this process creates from now on carry no group or other bits. chDB runs
 * in this process and creates its parts (later inserts, merges) with the process's umask, so
 * this is what keeps them owner-only; it is set before an embedded engine opens.
 */
export function restrictUmask(): void {
  // A worker thread may not change the process's umask; the main thread sets it before engines open.
  if (isMainThread) process.umask(GROUP_AND_OTHER);
}

/** Creates `dir` (and missing parents) owner-only, or takes group and other bits off `dir`. */
export async function ownerOnlyDir(dir: string): Promise<string> {
  await fs.mkdir(dir, { recursive: true, mode: OWNER_ONLY_DIR });
  await fs.chmod(dir, OWNER_ONLY_DIR);
  return dir;
}

/** Writes `file` (replacing what it held) as the owner's alone, an existing file included. */
export async function writeOwnerOnlyFile(file: string, data: string | Uint8Array): Promise<void> {
  const handle = await fs.open(file, 'w', OWNER_ONLY_FILE);
  try {
    await handle.chmod(OWNER_ONLY_FILE);
    await handle.writeFile(data);
  } finally {
    await handle.close();
  }
}

/**
 * Replaces `file` at once (a new file renamed over it): a reader, or a crash, sees the old
 * content or the new, never part of it.
 */
export async function replaceOwnerOnlyFile(file: string, data: string): Promise<void> {
  const next = `${file}.${process.pid}.next`;
  const handle = await fs.open(next, 'w', OWNER_ONLY_FILE);
  try {
    await handle.chmod(OWNER_ONLY_FILE);
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fs.rename(next, file);
}

/** A stream into a new file (an existing one is refused: EEXIST), the owner's alone. */
export function createOwnerOnlyWriteStream(file: string): WriteStream {
  return createWriteStream(file, { flags: 'wx', mode: OWNER_ONLY_FILE });
}

/** Copies `from` to `to`, leaving `to` the owner's alone. */
export async function copyOwnerOnlyFile(from: string, to: string): Promise<void> {
  await fs.copyFile(from, to);
  await fs.chmod(to, OWNER_ONLY_FILE);
}

/** Makes an existing file the owner's alone (one an engine wrote). */
export async function ownerOnlyFile(file: string): Promise<void> {
  await fs.chmod(file, OWNER_ONLY_FILE);
}

export interface ModeChange {
  path: string;
  found: number;
  set: number;
}

/** `0755`, as a mode is written. */
export const formatMode = (mode: number): string =>
  `0${(mode & 0o777).toString(8).padStart(3, '0')}`;

/**
 * Takes group and other bits off `root` and everything below it (symbolic links are left
 * alone, and not followed); returns what it changed, `root` first. A missing `root` changes
 * nothing. For data written before Cairn kept it owner-only; a folder's entries are looked at
 * side by side (11,664 entries, a DATA_DIR with 300,000 demo facts: about 0.2 s on a busy 2-core
 * machine, against 0.4 s one by one).
 */
export async function tightenTree(root: string): Promise<ModeChange[]> {
  const changes: ModeChange[] = [];
  const visit = async (entry: string): Promise<void> => {
    const stat = await fs.lstat(entry).catch(gone);
    if (!stat || stat.isSymbolicLink()) return;
    const found = stat.mode & 0o7777;
    if (found & GROUP_AND_OTHER) {
      const set = found & ~GROUP_AND_OTHER;
      await fs.chmod(entry, set).catch(gone);
      changes.push({ path: entry, found, set });
    }
    if (!stat.isDirectory()) return;
    const names = (await fs.readdir(entry).catch(gone)) ?? [];
    await Promise.all(names.map((name) => visit(path.join(entry, name))));
  };
  await visit(root);
  return changes;
}

/** An entry removed while the tree was walked is nothing to tighten. */
function gone(error: NodeJS.ErrnoException): undefined {
  if (error.code === 'ENOENT') return undefined;
  throw error;
}

/**
 * One line of warning per kind of change: `root` on its own (its path, the mode found and the
 * mode set), then the entries below it grouped by the modes found and set, with one path as an
 * example; a PGlite directory written before holds about a thousand files at 0666.
 */
export function describeTightening(root: string, changes: readonly ModeChange[]): TighteningLine[] {
  const groups = new Map<string, TighteningLine>();
  for (const change of changes) {
    const mode_found = formatMode(change.found);
    const mode_set = formatMode(change.set);
    const key = change.path === root ? '' : `${mode_found}>${mode_set}`;
    const group = groups.get(key);
    if (group) group.entries += 1;
    else groups.set(key, { path: change.path, mode_found, mode_set, entries: 1 });
  }
  return [...groups.values()];
}

export interface TighteningLine {
  path: string;
  mode_found: string;
  mode_set: string;
  /** How many entries changed this way (`path` is one of them). */
  entries: number;
}
