import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../libs/config/config.ts';
import { isAlive } from '../../libs/storage/pglite-lock.ts';
import { findRunningServer } from '../../libs/storage/running-server.ts';

/** Which embedded engines a command opens in DATA_DIR (none when their URLs are set). */
export interface EngineUse {
  postgres: boolean;
  clickhouse: boolean;
}

const embeddedIn = (config: Config, use: EngineUse) =>
  (use.postgres && config.embedded.postgres) || (use.clickhouse && config.embedded.clickhouse);

/**
 * Commands that only read or change what is there (tokens, projector) refuse a missing data
 * directory: opening the embedded engines would create an empty one, and a mistyped DATA_DIR
 * (or none, from another folder) would then answer "No tokens." about a database nobody uses.
 * `migrate` and `demo` create it: setting up the data is what they are for.
 */
export async function requireDataDir(config: Config, use: EngineUse): Promise<void> {
  if (!embeddedIn(config, use)) return;
  const stat = await fs.stat(config.dataDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (stat?.isDirectory()) return;
  if (stat) throw new Error(`DATA_DIR ${config.dataDir} is not a directory.`);
  throw new Error(
    [
      `No data directory at ${config.dataDir} (DATA_DIR; ./.data when unset).`,
      'Set DATA_DIR to the directory the Cairn server uses, or create one:',
      '  npm start                  (a first start creates it and loads demo data)',
      '  npm run cli -- migrate     (creates it with empty databases)',
    ].join('\n'),
  );
}

/** Says that a data directory did not exist before a command that creates it ran. */
export async function announceNewDataDir(config: Config, use: EngineUse): Promise<() => void> {
  if (!embeddedIn(config, use)) return () => {};
  const existed = await fs.stat(config.dataDir).then(
    () => true,
    () => false,
  );
  return () => {
    if (!existed) process.stderr.write(`Created the data directory ${config.dataDir}.\n`);
  };
}

/**
 * The live process other than this one holding an embedded engine in DATA_DIR: chDB keeps its
 * pid in `ch/status` while it runs, PGlite's lock file (pglite-lock.ts) holds its owner's.
 */
export async function holderOf(config: Config, use: EngineUse): Promise<number | undefined> {
  const files: Array<[string, RegExp]> = [];
  if (use.clickhouse && config.embedded.clickhouse) {
    files.push([path.join(config.dataPaths.clickhouse, 'status'), /^PID:\s*(\d+)/m]);
  }
  if (use.postgres && config.embedded.postgres) {
    files.push([`${config.dataPaths.postgres}.lock`, /^\s*(\d+)/]);
  }
  for (const [file, pid] of files) {
    const text = await fs.readFile(file, 'utf8').catch(() => '');
    const owner = Number(pid.exec(text)?.[1] ?? 0);
    if (owner > 0 && owner !== process.pid && isAlive(owner)) return owner;
  }
  return undefined;
}

/**
 * Refuses, before touching the engines, to run beside the process holding DATA_DIR: chDB and
 * PGlite admit one process per directory, and chDB's own refusal is a raw "Cannot lock file"
 * printed by the engine. `meanwhile` tells what to do with the server still running.
 */
export async function refuseWhileServerRuns(
  config: Config,
  use: EngineUse,
  meanwhile: string,
): Promise<void> {
  const owner = await holderOf(config, use);
  if (owner === undefined) return;
  const server = await findRunningServer(config.dataDir, owner);
  throw new Error(
    [
      `${server ? `The Cairn server at ${server.url}` : 'Another process'} (pid ${owner}) holds the data directory ${config.dataDir}: its embedded engines admit one process at a time.`,
      `Stop it (Ctrl-C where it runs, or kill ${owner}) and run this command again; ${meanwhile}`,
    ].join('\n'),
  );
}

/** An engine's own refusal of a held directory, for when the holder started after the check. */
export function heldDirectoryMessage(error: unknown): string | undefined {
  const text = error instanceof Error ? `${error.name} ${error.message}` : String(error);
  if (!/ChdbConnectionError|Cannot lock file|Failed to create connection for path/.test(text)) {
    return undefined;
  }
  return (
    'Another process (is the Cairn server running on this DATA_DIR?) holds the embedded ClickHouse. ' +
    'Stop it and run this command again, or use the running server through its API.'
  );
}
