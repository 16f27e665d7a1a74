import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '../libs/auth/token.service.ts';
import { openPostgres } from '../libs/storage/postgres.ts';
import { tempDir } from './support/engines.ts';

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
