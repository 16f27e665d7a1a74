import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';

export interface CliRun {
  /** The child's pid, to signal it. */
  pid: number;
  /** Resolves once it exits, with what it wrote. */
  done: Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
  }>;
}

/**
 * The CLI as a child process on embedded engines in `dataDir`, started with `umask 022` (the
 * usual default, under which files are readable by every user) whatever this process's umask:
 * what Cairn writes must be owner-only by its own doing.
 */
export function spawnCli(
  dataDir: string,
  args: string[],
  env: Record<string, string> = {},
): CliRun {
  const child = spawn(
    'sh',
    [
      '-c',
      'umask 022 && exec "$@"',
      'sh',
      process.execPath,
      '--import',
      'tsx',
      'apps/cli/main.ts',
      ...args,
    ],
    {
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        DATABASE_URL: '',
        REDIS_URL: '',
        CLICKHOUSE_URL: '',
        CAIRN_MASTER_KEY: '',
        LOG_LEVEL: 'silent',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const done = new Promise<Awaited<CliRun['done']>>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { pid: child.pid as number, done };
}

/** Runs the CLI (as `spawnCli`) to its end; rejects with its stderr when it fails. */
export async function runCli(
  dataDir: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ stdout: string; stderr: string }> {
  const result = await spawnCli(dataDir, args, env).done;
  if (result.code !== 0) {
    throw Object.assign(
      new Error(`cli ${args.join(' ')} failed (${result.code}): ${result.stderr}`),
      result,
    );
  }
  return result;
}

/**
 * Every entry under `root` (itself included; symbolic links are not followed, and their own
 * mode means nothing) that group or other may read, write or enter, as `path mode`.
 */
export async function openToOthers(root: string): Promise<string[]> {
  const open: string[] = [];
  const visit = async (entry: string) => {
    const stat = await fs.lstat(entry).catch(() => undefined);
    if (!stat || stat.isSymbolicLink()) return;
    if (stat.mode & 0o077) {
      open.push(`${path.relative(root, entry) || '.'} ${(stat.mode & 0o777).toString(8)}`);
    }
    if (stat.isDirectory()) {
      for (const name of await fs.readdir(entry).catch(() => []))
        await visit(path.join(entry, name));
    }
  };
  await visit(root);
  return open;
}

/** How many files (not folders) are under `root`: proof a walk had something to look at. */
export async function fileCount(root: string): Promise<number> {
  const entries = await fs.readdir(root, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).length;
}
