import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';
import { validatorFor } from '../support/live-documents.ts';

const run = promisify(execFile);

/** `npm start` as a user runs it: a child process on embedded engines and a fresh DATA_DIR. */
function startServer(dataDir: string): { child: ChildProcess; output: () => string } {
  const env: Record<string, string | undefined> = { ...process.env };
  // A first start is an embedded-engine affair, even when this suite runs against servers.
  for (const name of ['DATABASE_URL', 'CLICKHOUSE_URL', 'REDIS_URL', 'CAIRN_MASTER_KEY']) {
    delete env[name];
  }
  const child = spawn(process.execPath, ['--import', 'tsx', 'apps/server/main.ts'], {
    env: { ...env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout?.on('data', (chunk) => {
    text += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    text += chunk;
  });
  return { child, output: () => text };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** Runs a printed curl line exactly as pasted into a shell. */
async function runCurl(line: string): Promise<{ status: number; body: any }> {
  // -w appends the status on its own line after the body.
  const { stdout } = await run('sh', ['-c', `${line} -w '\\n%{http_code}'`]);
  const cut = stdout.lastIndexOf('\n');
  return { status: Number(stdout.slice(cut + 1)), body: JSON.parse(stdout.slice(0, cut)) };
}

describe('first start on an empty data directory', () => {
  let dataDir: string;
  let server: ReturnType<typeof startServer>;
  let printed: string;
  beforeAll(async () => {
    dataDir = await tempDir('cairn-first-start-');
    server = startServer(dataDir);
    printed = await waitFor(
      async () => /dependents\?[^\n]*\n/.test(server.output()) && server.output(),
      // A first start loads the demo and waits for its projection: slow on a busy machine.
      { timeoutMs: 150_000, intervalMs: 200 },
    ).catch((error) => {
      throw new Error(`${error.message}\n--- output ---\n${server.output()}`);
    });
  }, 180_000);
  afterAll(async () => {
    await stop(server.child);
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('prints the URL, the docs, and where the master key and demo token are, never a secret', async () => {
    const url = /API {9}(http:\/\/\S+)/.exec(printed)?.[1];
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(printed).toContain(`${url}/docs`);
    expect(printed).toContain(`; explorer: ${url}/explore`);
    expect(printed).toContain(`Explorer    ${url}/explore`);
    const masterKeyFile = path.join(dataDir, 'master.key');
    const tokenFile = path.join(dataDir, 'demo.token');
    expect(printed).toContain(`Master key  ${masterKeyFile}`);
    expect(printed).toContain(`Demo token  ${tokenFile}`);
    expect(printed).toContain('all scopes, businesses acme, globex, initech');
    const masterKey = (await fs.readFile(masterKeyFile, 'utf8')).trim();
    const token = (await fs.readFile(tokenFile, 'utf8')).trim();
    expect(token).toMatch(/^cairn_/);
    expect(printed).not.toContain(masterKey);
    expect(printed).not.toContain(token);
    expect(printed).not.toMatch(/^\{"level"/m);
    expect((await fs.stat(tokenFile)).mode & 0o077).toBe(0);
    const docs = await http(url!, 'GET', '/docs');
    expect(docs.status).toBe(200);
  });

  it('has history in which every metric shows something: due dates, overdue and blocked tasks', async () => {
    const url = /API {9}(http:\/\/\S+)/.exec(printed)![1]!;
    const token = (await fs.readFile(path.join(dataDir, 'demo.token'), 'utf8')).trim();
    const auth = { Authorization: `Bearer ${token}` };
    const catalog = (await http(url, 'GET', '/api/v1/query/catalog', { headers: auth })).body;
    const metrics = catalog.data.metrics.map((metric: { name: string }) => metric.name);
    expect(metrics).toEqual(expect.arrayContaining(['overdue_tasks', 'blocked_tasks']));
    // A query names at most 20 metrics: the catalog is asked in parts.
    for (let at = 0; at < metrics.length; at += 20) {
      const part = metrics.slice(at, at + 20);
      const answer = await http(url, 'POST', '/api/v1/query', {
        headers: auth,
        body: { metrics: part, period: 'last_90_days' },
      });
      expect(answer.status).toBe(200);
      const [row] = answer.body.data;
      for (const metric of part) expect(row[metric], metric).toBeGreaterThan(0);
    }
    const today = new Date().toISOString().slice(0, 10);
    const due = await http(
      url,
      'GET',
      `/api/v1/tasks?business=acme&status=open&status=in_progress&due_on[lt]=${today}`,
      { headers: auth },
    );
    const past = due.body;
    expect(past.meta?.total, JSON.stringify(past)).toBeGreaterThan(0);
  });

  it('the printed curl lines answer with months of demo history and a task’s dependents', async () => {
    const url = /API {9}(http:\/\/\S+)/.exec(printed)![1]!;
    const curls = printed
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.startsWith('curl '));
    expect(curls).toHaveLength(2);
    const expectDocumented = await validatorFor(url);
    const asHttp = (answer: { status: number; body: any }) => ({
      ...answer,
      headers: new Headers({
        'content-type': 'application/json',
        'x-request-id': crypto.randomUUID(),
      }),
      text: JSON.stringify(answer.body),
    });

    const query = await runCurl(curls[0]!);
    expect(query.status).toBe(200);
    expect(() => expectDocumented('post', '/api/v1/query', asHttp(query) as any)).not.toThrow();
    const months = new Set(query.body.data.map((row: any) => row.month));
    expect(months.size).toBeGreaterThanOrEqual(3);
    const created = query.body.data.reduce((sum: number, row: any) => sum + row.tasks_created, 0);
    const completed = query.body.data.reduce(
      (sum: number, row: any) => sum + row.tasks_completed,
      0,
    );
    expect(created).toBeGreaterThan(10);
    expect(completed).toBeGreaterThan(5);
    expect(query.body.warnings ?? []).not.toContainEqual(
      expect.objectContaining({ code: 'stale_data' }),
    );

    const dependents = await runCurl(curls[1]!);
    expect(dependents.status).toBe(200);
    const expected = Number(/The (\d+) tasks that depend/.exec(printed)?.[1]);
    expect(dependents.body.data).toHaveLength(expected);
    for (const task of dependents.body.data) {
      expect(task).toMatchObject({ gid: expect.any(String), resource_type: 'task' });
      expect(task).toHaveProperty('status');
    }
  });

  it('a later start on the same directory prints a one-line summary instead', async () => {
    await stop(server.child);
    server = startServer(dataDir);
    const summary = await waitFor(async () => /^Cairn: .*\n/m.exec(server.output())?.[0], {
      timeoutMs: 40_000,
      intervalMs: 200,
    });
    expect(summary).toBe(
      `Cairn: 120 tasks in 3 businesses · explorer ${/http:\S+\/explore/.exec(summary!)![0]} · docs ${/http:\S+\/docs/.exec(summary!)![0]} · master key in ${path.join(dataDir, 'master.key')} · demo token in ${path.join(dataDir, 'demo.token')}\n`,
    );
    expect(server.output()).not.toContain('Demo token');
    expect(server.output()).not.toContain('cairn_master_');
  }, 50_000);
});
