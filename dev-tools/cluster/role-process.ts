// One Cairn role (api or projector) as its own process, as a deployment runs it.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../private-servers.ts';
import { waitFor } from '../wait-for.ts';

export type Role = 'api' | 'projector';

/** What each role process is given besides the deployment's variables. */
export const ROLE_VARIABLES = ['CAIRN_ROLE', 'HOST', 'PORT'] as const;

export interface RoleProcess {
  role: Role;
  /** Its HTTP address: the API, or a projector's /healthz, /readyz and /metrics. */
  url: string;
  readonly pid: number;
  /** What it printed so far, stdout and stderr together. */
  output(): string;
  /** Resolves once it has exited. */
  exited(): Promise<void>;
  /** Sends `signal` (SIGKILL: a crash; SIGSTOP/SIGCONT: a pause). */
  signal(signal: NodeJS.Signals): void;
  /** Stops it gracefully (SIGTERM), killing it once `graceMs` has passed. */
  stop(graceMs?: number): Promise<void>;
  /** Starts it again with the same settings, on the same port. */
  restart(): Promise<void>;
}

/**
 * Starts `role` with `env` (the deployment's variables) on a port of its own and resolves once it
 * answers `/readyz` ready. Its output is kept for a caller that wants to say why it failed.
 */
export async function startRole(role: Role, env: Record<string, string>): Promise<RoleProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let child: ChildProcess;
  let out = '';
  let exit: Promise<void> = Promise.resolve();
  const start = async () => {
    out = '';
    child = spawn(process.execPath, ['--import', 'tsx', path.resolve('apps/server/main.ts')], {
      env: {
        ...process.env,
        ...env,
        CAIRN_ROLE: role,
        HOST: '127.0.0.1',
        PORT: String(port),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk) => {
      out += chunk;
    });
    child.stderr?.on('data', (chunk) => {
      out += chunk;
    });
    exit = new Promise((resolve) => child.once('exit', () => resolve()));
    let gone = false;
    void exit.then(() => {
      gone = true;
    });
    await waitFor(
      async () => {
        if (gone) throw new Error(`the ${role} process exited before it was ready:\n${out}`);
        try {
          const res = await fetch(`${url}/readyz`);
          await res.arrayBuffer();
          return res.status === 200;
        } catch {
          return false;
        }
      },
      { timeoutMs: 180_000, intervalMs: 100 },
    );
  };
  await start();
  return {
    role,
    url,
    get pid() {
      return child.pid as number;
    },
    output: () => out,
    exited: () => exit,
    signal(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    async stop(graceMs = 30_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exit;
      clearTimeout(timer);
    },
    restart: start,
  };
}
