import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase, tempDir } from '../support/engines.ts';
import { http } from '../support/http.ts';
import { type ServerProcess, spawnServer } from '../support/server-process.ts';

const run = promisify(execFile);

async function stop(server: ServerProcess): Promise<void> {
  if (server.child.exitCode === null) server.child.kill('SIGTERM');
  await server.exited;
}

describe('start-up on a Postgres server without CAIRN_MASTER_KEY', () => {
  let database: TestDatabase;
  let dataDir: string;
  let server: ServerProcess;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = await tempDir();
    server = await spawnServer({
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      CAIRN_MASTER_KEY: '',
      CLICKHOUSE_URL: '',
      REDIS_URL: '',
      LOG_LEVEL: 'info',
    });
  }, 60_000);
  afterAll(async () => {
    await stop(server);
    await database.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('says there is no master key and how to get a token, on stderr beside JSON logs', async () => {
    const words = server.stderr();
    expect(words).toContain('No master key: CAIRN_MASTER_KEY is unset');
    expect(words).toContain('npm run cli -- tokens create --name');
    expect(words).not.toContain('master key in');
    // stdout is for log collectors: JSON lines only.
    const lines = server.stdout().trim().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
  });

  it('tells a caller of the token endpoints why nothing is accepted', async () => {
    const refused = await http(server.url, 'POST', '/api/v1/tokens', {
      body: { name: 'x', scopes: ['analytics:read'], businesses: ['acme'], kind: 'user' },
      headers: { Authorization: 'Bearer change-me-to-a-long-random-secret' },
    });
    expect(refused.status).toBe(401);
    expect(refused.body.detail).toContain('this server has no master key');
    expect(refused.body.detail).toContain('npm run cli -- tokens create');
  });
});

describe('logs on a terminal', () => {
  it('are readable lines, not JSON', async () => {
    const dataDir = await tempDir();
    // `script` gives the process a pseudo-terminal, as a person starting it has.
    const program = [
      "const { createLogger } = await import('./libs/observability/logger.ts');",
      "createLogger('info').info({ role: 'all' }, 'cairn started');",
    ].join(' ');
    const command = `${process.execPath} --import tsx --input-type=module -e "${program}"`;
    const { stdout } = await run('script', ['-qfec', command, '/dev/null'], {
      cwd: path.resolve('.'),
      env: { ...process.env, DATA_DIR: dataDir, TERM: 'xterm' },
    });
    const text = stdout.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '');
    expect(text).toMatch(/INFO.*cairn started/);
    expect(text).toContain('role: "all"');
    expect(text).not.toContain('{"level"');
    await fs.rm(dataDir, { recursive: true, force: true });
  }, 30_000);
});
