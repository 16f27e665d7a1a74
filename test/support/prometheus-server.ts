import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../dev-tools/private-servers.ts';
import { waitFor } from './engines.ts';

/** A Prometheus server of its own (Debian's `prometheus` package), ready to answer its API. */
export interface TestPrometheus {
  /** Its HTTP API, `http://127.0.0.1:<port>`. */
  api: string;
  /** What it has written to stderr so far. */
  log(): string;
  stop(): Promise<void>;
}

/** Starts Prometheus on `config` (its configuration as an object) in a fresh directory. */
export async function startPrometheus(config: unknown): Promise<TestPrometheus> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-prometheus-'));
  await fs.writeFile(path.join(dir, 'prometheus.yml'), JSON.stringify(config));
  const port = await freePort();
  const api = `http://127.0.0.1:${port}`;
  let log = '';
  const prometheus: ChildProcess = spawn(
    'prometheus',
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  prometheus.stderr!.on('data', (chunk) => {
    log += chunk;
  });
  let failed: Error | undefined;
  prometheus.on('error', (error) => {
    failed = new Error(`prometheus: ${error.message} (apt-get install prometheus)`);
  });
  const stop = async () => {
    if (prometheus.pid !== undefined && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus.once('exit', resolve));
      prometheus.kill('SIGTERM');
      await exited;
    }
    await fs.rm(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => {
        if (failed) throw failed;
        if (prometheus.exitCode !== null) throw new Error(`prometheus exited: ${log}`);
        return (await fetch(`${api}/-/ready`).catch(() => undefined))?.ok;
      },
      { timeoutMs: 20_000, intervalMs: 100 },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { api, log: () => log, stop };
}
