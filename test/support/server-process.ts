import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../../dev-tools/private-servers.ts';
import { validatorFor } from './live-documents.ts';

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  stdout(): string;
  /** The server's words to its operator (the banner), when stdout is not a terminal. */
  stderr(): string;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `npm start` as a real child process (node + tsx), so signals reach our own handlers. */
export async function spawnServer(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('apps/server/main.ts')], {
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk) => {
    out += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    err += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      // The banner is on stderr when stdout is not a terminal (stdout then carries JSON logs).
      if (`${out}${err}`.includes('is serving on')) {
        clearInterval(timer);
        resolve();
      }
    }, 50);
    void exited.then(({ code }) => {
      clearInterval(timer);
      reject(new Error(`server exited (${code}) before serving: ${err}`));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  // Its document, for checking every answer a test gets from it through `http`.
  await validatorFor(url);
  return { url, child, stdout: () => out, stderr: () => err, exited };
}
