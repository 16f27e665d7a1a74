import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

export interface SpawnOptions {
  /** chDB's data directory, owned by the child alone. */
  dataDir: string;
  /** Default 0: a free port, read back from what the child prints. */
  port?: number;
  user?: string;
  password?: string;
}

export interface SpawnedEndpoint {
  url: string;
  pid: number;
  child: ChildProcess;
  /** SIGTERM, then waits for the child to close chDB and exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

const CLI = path.resolve(import.meta.dirname, '../clickhouse-http.ts');

/**
 * The endpoint as a child process (its own chDB data directory: a process that holds a chDB
 * session of its own cannot open another), resolved once it printed `ready`.
 */
export async function spawnClickHouseHttp(options: SpawnOptions): Promise<SpawnedEndpoint> {
  const args = [
    '--import',
    'tsx',
    CLI,
    '--port',
    String(options.port ?? 0),
    '--data',
    options.dataDir,
  ];
  // `--name=value`: a value that starts with a dash (a random password may) stays a value.
  if (options.user !== undefined) args.push(`--user=${options.user}`);
  if (options.password !== undefined) args.push(`--password=${options.password}`);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Read to the end either way (a full pipe would stall the child); kept only until `ready`.
  let out = '';
  let err = '';
  let starting = true;
  child.stderr?.on('data', (chunk) => {
    if (starting) err += chunk;
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk) => {
      if (!starting) return;
      out += chunk;
      const announced = /role=clickhouse url=(\S+) pid=\d+\n/.exec(out);
      if (announced && /\nready\n/.test(out)) resolve(announced[1] as string);
    });
    child.once('exit', (code, signal) =>
      reject(new Error(`the ClickHouse stand-in exited (${code ?? signal}) before ready: ${err}`)),
    );
  });
  starting = false;
  return {
    url,
    pid: child.pid as number,
    child,
    async stop(graceMs = 30_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
