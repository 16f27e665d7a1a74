import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export interface Served {
  url: string;
  child: ChildProcess;
  /** Everything the server printed so far. */
  said(): string;
  stop(): Promise<void>;
}

/**
 * `npm start` on embedded engines in a child process (a fresh data directory, a random port),
 * resolved once it says it is serving, so load and server share no event loop.
 */
export async function serveMain(
  env: Record<string, string>,
  options: { masterKey: string; dataDirPrefix: string; startTimeoutMs?: number },
): Promise<Served> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), options.dataDirPrefix));
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('apps/server/main.ts')], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'error',
      CAIRN_MASTER_KEY: options.masterKey,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let said = '';
  child.stdout?.on('data', (chunk) => {
    said += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    said += chunk;
  });
  const deadline = Date.now() + (options.startTimeoutMs ?? 120_000);
  while (!said.includes('is serving on')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not start: ${said}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    said: () => said,
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}
