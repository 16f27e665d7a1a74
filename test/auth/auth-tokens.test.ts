import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { randomSecret } from '../support/auth.ts';
import { startTestCairn, useCairn } from '../support/cairn.ts';
import { testConfig } from '../support/engines.ts';
import { http } from '../support/http.ts';

describe('tokens and authorisation', () => {
  const cairn = useCairn({ env: { CAIRN_MASTER_KEY: randomSecret() } });

  const createToken = (body: unknown, headers = cairn.master) =>
    http(cairn.url, 'POST', '/api/v1/tokens', { body, headers });

  it('issues a token with the master key, shows it once and stores only its hash', async () => {
    const res = await createToken({
      name: 'dashboards',
      scopes: ['analytics:read'],
      businesses: ['acme'],
      kind: 'service_account',
      expires_in_days: 30,
    });
    expect(res.status).toBe(201);
    const data = res.body.data;
    expect(data).toMatchObject({
      id: expect.stringMatching(/^tok_[0-9a-f]{16}$/),
      token: expect.stringMatching(/^cairn_[A-Za-z0-9_-]{43}$/),
      name: 'dashboards',
      scopes: ['analytics:read'],
      businesses: ['acme'],
      kind: 'service_account',
    });
    expect(Date.parse(data.expires_at) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    expect(res.body.meta.request_id).toBe(res.headers.get('x-request-id'));
    const stored = await cairn.db
      .selectFrom('api_tokens')
      .selectAll()
      .where('id', '=', data.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(data.token);

    const query = await http(cairn.url, 'POST', '/api/v1/query', {
      body: { metrics: ['tasks_created'] },
      headers: { Authorization: `Bearer ${data.token}` },
    });
    expect(query.status).toBe(200);
  });

  it('refuses the token endpoints without the master key', async () => {
    const body = { name: 'x', scopes: ['analytics:read'], businesses: ['acme'] };
    const anonymous = await http(cairn.url, 'POST', '/api/v1/tokens', { body });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const user = await createToken(body, await cairn.token({ businesses: ['acme'] }));
    expect(user.status).toBe(403);
    const wrong = await createToken(body, { Authorization: 'Bearer not-the-master-key' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toContain('invalid_token');
  });

  it('validates token requests', async () => {
    const res = await createToken({
      name: '',
      scopes: ['root'],
      businesses: [],
      kind: 'robot',
      extra: 1,
    });
    expect(res.status).toBe(422);
    const locs = res.body.detail.map((issue: { loc: unknown[] }) => issue.loc.join('.'));
    expect(locs).toEqual(
      expect.arrayContaining([
        'body.name',
        'body.scopes.0',
        'body.businesses',
        'body.kind',
        'body.extra',
      ]),
    );
  });

  it('revokes a token so it is refused at once', async () => {
    const issued = (
      await createToken({ name: 'tmp', scopes: ['workflows:read'], businesses: ['acme'] })
    ).body.data;
    const headers = { Authorization: `Bearer ${issued.token}` };
    expect((await http(cairn.url, 'GET', '/api/v1/tasks/nope', { headers })).status).toBe(404);
    const revoked = await http(cairn.url, 'DELETE', `/api/v1/tokens/${issued.id}`, {
      headers: cairn.master,
    });
    expect(revoked.status).toBe(204);
    const after = await http(cairn.url, 'GET', '/api/v1/tasks/nope', { headers });
    expect(after.status).toBe(401);
    expect(after.body.detail).toContain('revoked');
    const again = await http(cairn.url, 'DELETE', `/api/v1/tokens/${issued.id}`, {
      headers: cairn.master,
    });
    expect(again.status).toBe(404);
  });

  it('answers 401 for missing, malformed and expired tokens, 403 for a missing scope', async () => {
    expect(
      (await http(cairn.url, 'POST', '/api/v1/query', { body: { metrics: ['tasks_created'] } }))
        .status,
    ).toBe(401);
    const malformed = await http(cairn.url, 'GET', '/api/v1/tasks/x', {
      headers: { Authorization: 'Basic abc' },
    });
    expect(malformed.status).toBe(401);
    await cairn.db
      .insertInto('api_tokens')
      .values({
        id: 'tok_00000000000000ee',
        name: 'old',
        token_hash: (await import('../../libs/auth/token-secret.ts')).hashSecret('cairn_expired'),
        kind: 'user',
        scopes: ['workflows:read'],
        businesses: ['acme'],
        expires_at: new Date(Date.now() - 1000),
      })
      .execute();
    const expired = await http(cairn.url, 'GET', '/api/v1/tasks/x', {
      headers: { Authorization: 'Bearer cairn_expired' },
    });
    expect(expired.status).toBe(401);
    expect(expired.body.detail).toContain('expired');

    const readOnly = await cairn.token({ scopes: ['workflows:read'], businesses: ['acme'] });
    const denied = await http(cairn.url, 'POST', '/api/v1/query', {
      body: { metrics: ['tasks_created'] },
      headers: readOnly,
    });
    expect(denied.status).toBe(403);
    expect(denied.body.required_scope).toBe('analytics:read');
    const master = await http(cairn.url, 'POST', '/api/v1/query', {
      body: { metrics: ['tasks_created'] },
      headers: cairn.master,
    });
    expect(master.status).toBe(403);
  });

  it('hides objects of other businesses behind 404', async () => {
    const a = await cairn.token({ businesses: ['alpha'] });
    const b = await cairn.token({ businesses: ['beta'] });
    const task = (
      await http(cairn.url, 'POST', '/api/v1/tasks', {
        body: { business: 'alpha', name: 'a' },
        headers: a,
      })
    ).body.data;
    const missing = await http(cairn.url, 'GET', '/api/v1/tasks/does-not-exist', { headers: b });
    const foreign = await http(cairn.url, 'GET', `/api/v1/tasks/${task.gid}`, { headers: b });
    expect(foreign.status).toBe(404);
    expect(foreign.body.title).toBe(missing.body.title);
    const create = await http(cairn.url, 'POST', '/api/v1/tasks', {
      body: { business: 'alpha', name: 'x' },
      headers: b,
    });
    expect(create.status).toBe(404);
    const query = await http(cairn.url, 'POST', '/api/v1/query', {
      body: { metrics: ['tasks_created'], business: 'alpha' },
      headers: b,
    });
    expect(query.status).toBe(404);
  });
});

describe('master key bootstrap on embedded engines', () => {
  it('generates a key on first start, keeps it in DATA_DIR and reuses it', async () => {
    const setup = await testConfig({ DATABASE_URL: '', REDIS_URL: '' });
    try {
      const first = await startTestCairn({ config: setup.config });
      expect(first.masterKey.generated).toBe(true);
      const key = first.masterKey.value;
      await first.close();
      const file = path.join(setup.config.dataDir, 'master.key');
      expect((await fs.readFile(file, 'utf8')).trim()).toBe(key);
      expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
      const second = await startTestCairn({ config: setup.config });
      expect(second.masterKey).toMatchObject({ value: key, generated: false });
      await second.close();
    } finally {
      await setup.cleanup();
    }
  });
});
