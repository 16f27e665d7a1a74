// Throwaway Redis and Postgres servers for fault tests and benches: the machine's shared servers
// serve other test files running in parallel, so whatever kills or freezes a server must own it.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { waitFor } from './wait-for.ts';

const run = promisify(execFile);

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export interface PrivateServer {
  url: string;
  /** Freezes every process of the server (SIGSTOP): connections stay open, nothing answers. */
  pause?(): Promise<void>;
  /** Thaws what pause froze. */
  resume?(): Promise<void>;
  /** Kills the server at once (SIGKILL for Redis, immediate shutdown for Postgres). */
  kill(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** A redis-server without persistence: a restart comes back empty, like a fresh failover. */
export async function privateRedis(): Promise<PrivateServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const url = `redis://127.0.0.1:${port}`;
  const server: PrivateServer = {
    url,
    async start() {
      child = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        { stdio: 'ignore' },
      );
      await waitFor(async () => {
        try {
          const { stdout } = await run('redis-cli', ['-p', String(port), 'ping']);
          return stdout.trim() === 'PONG';
        } catch {
          return false;
        }
      });
    },
    async pause() {
      child?.kill('SIGSTOP');
    },
    async resume() {
      child?.kill('SIGCONT');
    },
    async kill() {
      if (!child) return;
      // A frozen process still dies of SIGKILL.
      child.kill('SIGKILL');
      await exited(child);
      child = undefined;
    },
    async stop() {
      await server.kill();
    },
  };
  await server.start();
  return server;
}

/**
 * A Postgres 15 cluster of its own (initdb in a temp dir, trust auth), run as `postgres`.
 * `parent` puts that dir elsewhere, such as a small file system a test fills.
 */
export async function privatePostgres(options: { parent?: string } = {}): Promise<PrivateServer> {
  const bin = await postgresBin();
  const port = await freePort();
  const root = await fs.mkdtemp(path.join(options.parent ?? os.tmpdir(), 'cairn-pg-'));
  const data = path.join(root, 'data');
  await fs.chmod(root, 0o777);
  const asPostgres = (command: string, args: string[]) =>
    run('runuser', ['-u', 'postgres', '--', path.join(bin, command), ...args]);
  await asPostgres('initdb', ['-D', data, '--auth=trust', '-U', 'postgres', '-N']);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  // The postmaster and its children (backends, checkpointer, …), all started by this server.
  const processes = async (): Promise<number[]> => {
    const postmaster = Number(
      (await fs.readFile(path.join(data, 'postmaster.pid'), 'utf8')).split('\n')[0],
    );
    const { stdout } = await run('ps', ['-o', 'pid=', '--ppid', String(postmaster)]);
    return [
      postmaster,
      ...stdout
        .split('\n')
        .filter((line) => line.trim())
        .map(Number),
    ];
  };
  let paused: number[] = [];
  const server: PrivateServer = {
    url,
    async pause() {
      paused = await processes();
      for (const pid of paused) process.kill(pid, 'SIGSTOP');
    },
    async resume() {
      for (const pid of paused) process.kill(pid, 'SIGCONT');
      paused = [];
    },
    async start() {
      const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${root} -c fsync=off`;
      await asPostgres('pg_ctl', ['-D', data, '-o', options, '-w', 'start', '-l', `${root}/log`]);
      await waitFor(async () => {
        const client = new pg.Client({ connectionString: url });
        try {
          await client.connect();
          await client.end();
          return true;
        } catch {
          return false;
        }
      });
    },
    async kill() {
      await asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    },
    async stop() {
      await asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
      await fs.rm(root, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

async function postgresBin(): Promise<string> {
  const versions = (await fs.readdir('/usr/lib/postgresql')).sort((a, b) => Number(b) - Number(a));
  if (!versions[0]) throw new Error('no Postgres binaries under /usr/lib/postgresql');
  return `/usr/lib/postgresql/${versions[0]}/bin`;
}
