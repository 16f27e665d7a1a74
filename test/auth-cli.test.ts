import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '../libs/auth/token.service.ts';
import { openPostgres } from '../libs/storage/postgres.ts';
import { useCairn } from './support/cairn.ts';
import { tempDir } from './support/engines.ts';
import { http } from './support/http.ts';

const run = promisify(execFile);
const TSX = path.resolve('node_modules/.bin/tsx');

describe('tokens CLI on the embedded engine', () => {
  let dataDir: string;
  const cli = (...args: string[]) =>
    run(TSX, ['apps/cli/main.ts', 'tokens', ...args], {
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'silent' },
    });
  beforeAll(async () => {
    dataDir = await tempDir();
  });
  afterAll(async () => {
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('creates, lists and revokes a token, printing the secret once', async () => {
    const created = await cli(
      'create',
      '--name',
      'ci',
      '--scopes',
      'analytics:read,workflows:read',
      '--business',
      'acme',
      '--business',
      'beta',
      '--service-account',
      '--expires-in-days',
      '7',
    );
    const token = /\n {2}(cairn_\S+)\n/.exec(created.stdout)?.[1] ?? '';
    const id = /Created (tok_[0-9a-f]{16})/.exec(created.stdout)?.[1] ?? '';
    expect(token).toMatch(/^cairn_[A-Za-z0-9_-]{43}$/);
    const listed = await cli('list');
    expect(listed.stdout).toContain(`${id}  active  service_account  ci`);
    expect(listed.stdout).not.toContain(token);

    const pg = await openPostgres({ dataDir: path.join(dataDir, 'pg') });
    const principal = await authenticate(pg.db, `Bearer ${token}`, undefined, new Date());
    expect(principal).toMatchObject({ kind: 'token', businesses: ['acme', 'beta'] });
    await pg.close();

    await cli('revoke', id);
    expect((await cli('list')).stdout).toContain(`${id}  revoked`);
  }, 90_000);

  it('refuses bad input and an embedded database another process holds', async () => {
    await expect(
      cli('create', '--name', 'x', '--scopes', 'root', '--business', 'acme'),
    ).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('scopes.0') });
    const held = await openPostgres({ dataDir: path.join(dataDir, 'pg') });
    try {
      await expect(cli('list')).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining(`in use by process ${process.pid}`),
      });
    } finally {
      await held.close();
    }
  }, 60_000);
});

describe('tokens CLI while the embedded server runs on the same DATA_DIR', () => {
  // Embedded engines whatever the run's mode: the CLI must meet the server on DATA_DIR.
  const cairn = useCairn({
    env: { DATABASE_URL: '', REDIS_URL: '', CAIRN_MASTER_KEY: '' },
    issueToken: false,
  });
  const cli = (...args: string[]) =>
    run(TSX, ['apps/cli/main.ts', 'tokens', ...args], {
      env: {
        ...process.env,
        DATA_DIR: cairn.config.dataDir,
        DATABASE_URL: '',
        CAIRN_MASTER_KEY: '',
        LOG_LEVEL: 'silent',
      },
    });

  it('creates, lists and revokes through the running server', async () => {
    const created = await cli(
      'create',
      '--name',
      'live',
      '--scopes',
      'workflows:read',
      '--business',
      'acme',
    );
    const token = /\n {2}(cairn_\S+)\n/.exec(created.stdout)?.[1] ?? '';
    const id = /Created (tok_[0-9a-f]{16})/.exec(created.stdout)?.[1] ?? '';
    expect(token).toMatch(/^cairn_/);
    const headers = { Authorization: `Bearer ${token}` };
    expect((await http(cairn.url, 'GET', '/api/v1/tokens/self', { headers })).status).toBe(200);

    expect((await cli('list')).stdout).toContain(
      `${id}  active  user  live  scopes=workflows:read`,
    );
    expect((await cli('revoke', id)).stdout).toBe(`Revoked ${id}.\n`);
    expect((await http(cairn.url, 'GET', '/api/v1/tokens/self', { headers })).status).toBe(401);
    await expect(cli('revoke', id)).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`token ${id} does not exist or is already revoked`),
    });
  }, 90_000);
});
