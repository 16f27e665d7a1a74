import fs from 'node:fs/promises';
import path from 'node:path';
import { ownerOnlyDir, writeOwnerOnlyFile } from '../storage/owner-only.ts';
import { isAlive } from '../storage/pglite-lock.ts';

/**
 * A restore builds the installation in a folder beside DATA_DIR (same file system) and only
 * then puts it in DATA_DIR's place with a rename: until that moment DATA_DIR is as it was,
 * whether the restore is refused, fails or is killed. What a killed restore leaves is the
 * staging folder alone, which the next restore clears.
 */
export const stagingDirFor = (dataDir: string): string =>
  path.join(path.dirname(dataDir), `.${path.basename(dataDir)}.restoring`);

/** Names the process filling a staging folder, so a second restore does not clear it under it. */
const OWNER_FILE = 'restoring.pid';

export type RestoreTarget =
  | { kind: 'missing' | 'empty' | 'installation' }
  | { kind: 'other'; entries: string[] };

/** What DATA_DIR holds: nothing, an installation (its engines' folders), or something else. */
export async function inspectTarget(
  dataDir: string,
  dataPaths: { postgres: string; clickhouse: string },
): Promise<RestoreTarget> {
  const entries = await fs.readdir(dataDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (entries === undefined) return { kind: 'missing' };
  if (entries.length === 0) return { kind: 'empty' };
  const engines = [dataPaths.postgres, dataPaths.clickhouse].map((dir) =>
    path.relative(dataDir, dir),
  );
  return engines.some((name) => entries.includes(name))
    ? { kind: 'installation' }
    : { kind: 'other', entries };
}

/** An empty, owner-only staging folder for this process; what a killed restore left is cleared. */
export async function prepareStaging(staging: string): Promise<void> {
  const owner = Number(
    (await fs.readFile(path.join(staging, OWNER_FILE), 'utf8').catch(() => '')).trim(),
  );
  if (owner > 0 && owner !== process.pid && isAlive(owner)) {
    throw new Error(
      `Another restore (pid ${owner}) is filling ${staging}; wait for it, or stop it and run this one again.`,
    );
  }
  await fs.rm(staging, { recursive: true, force: true });
  await ownerOnlyDir(staging);
  await writeOwnerOnlyFile(path.join(staging, OWNER_FILE), String(process.pid));
}

/**
 * Puts the staged installation in DATA_DIR's place. A missing or empty DATA_DIR is replaced by
 * one rename; an installation is first moved aside (`<DATA_DIR>.replaced-<time>`), whose path
 * is returned: a restore never deletes data the operator may still want.
 */
export async function swapIn(
  staging: string,
  dataDir: string,
  target: RestoreTarget,
  now: Date,
): Promise<string | undefined> {
  await fs.rm(path.join(staging, OWNER_FILE));
  if (target.kind !== 'installation') {
    // rename(2) replaces an empty folder in the same step.
    await fs.rename(staging, dataDir);
    return undefined;
  }
  const aside = `${dataDir}.replaced-${now.toISOString().replace(/[:.]/g, '-')}`;
  await fs.rename(dataDir, aside);
  await fs.rename(staging, dataDir);
  return aside;
}
