import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeRefusal } from '../../apps/cli/server-answer.ts';
import { authenticate } from '../../libs/auth/token.service.ts';
import { openPostgres } from '../../libs/storage/postgres.ts';
import { randomSecret } from '../support/auth.ts';
import { useCairn } from '../support/cairn.ts';
import { migratedPglite, tempDir, useMigratedPostgres } from '../support/engines.ts';
import { http } from '../support/http.ts';

/** What a failed CLI run printed, or undefined when it succeeded. */
const failureOf = (running: Promise<unknown>) =>
  running.then(
    () => undefined,
    (error: { code: number; stdout: string; stderr: string }) => error,
  );

const NO_TASKS = (business: string) => `warning: business "${business}" has no tasks yet.`;

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
    await migratedPglite(path.join(dataDir, 'pg'));
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
  }, 180_000);

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
  }, 120_000);

  it('says why a token id is wrong, in words', async () => {
    const failure = await failureOf(cli('revoke', 'tok_nope'));
    expect(failure).toMatchObject({ code: 1, stdout: '' });
    expect(failure!.stderr).toContain(
      'error: tok_nope is not a token id (tok_ and 16 hex digits, as create and list print):\n' +
        "  id: String should match pattern '^tok_[0-9a-f]{16}$'",
    );
    expect(failure!.stderr).not.toContain('[object Object]');
  }, 180_000);

  it('issues a token for a business with no tasks, warning that it has none', async () => {
    const created = await cli(
      'create',
      '--name',
      'typo',
      '--scopes',
      'workflows:read',
      '--business',
      'nope',
    );
    expect(created.stdout).toMatch(/^Created tok_[0-9a-f]{16} /);
    expect(created.stderr).toContain(NO_TASKS('nope'));
  }, 180_000);
});

describe('tokens CLI on a Postgres server (DATABASE_URL)', () => {
  const scratch = useMigratedPostgres();

  it('needs no data directory, and warns only of the businesses without tasks', async () => {
    const parent = await tempDir();
    const dataDir = path.join(parent, 'never-made');
    const now = new Date();
    await scratch.pg.db
      .insertInto('tasks')
      .values({
        gid: 'cli-warn-1',
        business: 'acme',
        name: 'x',
        project: null,
        assignee: null,
        due_on: null,
        created_at: now,
        updated_at: now,
        completed_at: null,
        created_project: null,
        created_assignee: null,
        created_status: 'open',
        first_completed_at: null,
        started_at: null,
        blocked_ms: 0,
        blocked_since: null,
      })
      .execute();
    try {
      const created = await run(
        TSX,
        [
          'apps/cli/main.ts',
          'tokens',
          'create',
          '--name',
          'srv',
          '--scopes',
          'analytics:read',
          '--business',
          'acme',
          '--business',
          'nope',
        ],
        {
          env: {
            ...process.env,
            DATA_DIR: dataDir,
            DATABASE_URL: scratch.url,
            LOG_LEVEL: 'silent',
          },
        },
      );
      expect(created.stdout).toMatch(/^Created tok_[0-9a-f]{16} /);
      expect(created.stderr).toContain(NO_TASKS('nope'));
      expect(created.stderr).not.toContain(NO_TASKS('acme'));
      await expect(fs.stat(dataDir)).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await fs.rm(parent, { recursive: true, force: true });
    }
  }, 180_000);
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

  it('warns of a business without tasks, seen through the server with the new token', async () => {
    const writer = await cairn.token({ businesses: ['acme'] });
    const task = await http(cairn.url, 'POST', '/api/v1/tasks', {
      body: { business: 'acme', name: 'seen' },
      headers: writer,
    });
    expect(task.status).toBe(201);
    const created = await cli(
      'create',
      '--name',
      'two',
      '--scopes',
      'workflows:read',
      '--business',
      'acme',
      '--business',
      'nope',
    );
    expect(created.stdout).toMatch(/^Created tok_[0-9a-f]{16} /);
    expect(created.stderr).toContain(NO_TASKS('nope'));
    expect(created.stderr).not.toContain(NO_TASKS('acme'));
  }, 180_000);

  it("reads the server's refusals as title and detail, and field errors as loc: msg", async () => {
    const failure = await failureOf(
      run(TSX, ['apps/cli/main.ts', 'tokens', 'list'], {
        env: {
          ...process.env,
          DATA_DIR: cairn.config.dataDir,
          DATABASE_URL: '',
          CAIRN_MASTER_KEY: 'not-the-master-key-of-this-server-0123456789',
          LOG_LEVEL: 'silent',
        },
      }),
    );
    expect(failure).toMatchObject({ code: 1 });
    expect(failure!.stderr).toMatch(
      new RegExp(
        `the Cairn server at ${cairn.url.replace(/[.]/g, '\\.')} \\(it holds this DATA_DIR\\) refused: Unauthorized \\(401\\): \\S`,
      ),
    );
    expect(failure!.stderr).not.toContain('[object Object]');
    // The CLI checks ids itself; the server's own 422 for one reads the same way.
    const refused = await http(cairn.url, 'DELETE', '/api/v1/tokens/tok_nope', {
      headers: cairn.master,
    });
    expect(refused.status).toBe(422);
    expect(describeRefusal(refused.status, refused.body)).toBe(
      "invalid request (422):\n  path.id: String should match pattern '^tok_[0-9a-f]{16}$'",
    );
  }, 180_000);
});

describe('CLI beside an embedded server given CAIRN_MASTER_KEY (no key file)', () => {
  const masterKey = randomSecret();
  const cairn = useCairn({
    env: { DATABASE_URL: '', REDIS_URL: '', CAIRN_MASTER_KEY: masterKey },
    issueToken: false,
  });
  const cli = (key: string, ...args: string[]) =>
    run(TSX, ['apps/cli/main.ts', ...args], {
      env: {
        ...process.env,
        DATA_DIR: cairn.config.dataDir,
        DATABASE_URL: '',
        CAIRN_MASTER_KEY: key,
        LOG_LEVEL: 'silent',
      },
    });
  const create = [
    'tokens',
    'create',
    '--name',
    'k',
    '--scopes',
    'analytics:read',
    '--business',
    'a',
  ];

  it('uses CAIRN_MASTER_KEY, and without it names what is missing instead of ENOENT', async () => {
    await expect(fs.stat(path.join(cairn.config.dataDir, 'master.key'))).rejects.toMatchObject({
      code: 'ENOENT',
    });
    const created = await cli(masterKey, ...create);
    expect(created.stdout).toMatch(/^Created tok_[0-9a-f]{16} /);

    const failure = await failureOf(cli('', ...create));
    expect(failure).toMatchObject({ code: 1 });
    expect(failure!.stderr).toContain('CAIRN_MASTER_KEY is unset');
    expect(failure!.stderr).toContain(path.join(cairn.config.dataDir, 'master.key'));
    expect(failure!.stderr).not.toMatch(/ENOENT|no such file/);

    // Erasing a business goes through the server the same way, and says the same.
    const erase = (key: string) => cli(key, 'businesses', 'erase', 'a');
    const refused = await failureOf(erase(''));
    expect(refused).toMatchObject({ code: 1 });
    expect(refused!.stderr).toContain('erasing a business through it needs its master key');
    expect(refused!.stderr).not.toMatch(/ENOENT|no such file/);
    // With the key, the erasure runs through the server to its end.
    await erase(masterKey);
    const erasure = await http(cairn.url, 'GET', '/api/v1/businesses/a/erasure', {
      headers: cairn.master,
    });
    expect(erasure.body.data.status).toBe('done');
  }, 180_000);
});
