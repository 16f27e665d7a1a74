import { beforeAll, describe, expect, it } from 'vitest';
import { randomSecret } from '../support/auth.ts';
import { useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';
import { openApiValidator } from '../support/openapi-validator.ts';

describe('GET /api/v1/tokens and /api/v1/tokens/self', () => {
  let expectDocumented: ReturnType<typeof openApiValidator>;
  const issued: Array<{ id: string; token: string }> = [];

  const issue = async (body: Record<string, unknown>) => {
    const res = await http(cairn.url, 'POST', '/api/v1/tokens', {
      headers: cairn.master,
      body: { scopes: ['analytics:read'], businesses: ['acme'], ...body },
    });
    expect(res.status).toBe(201);
    issued.push(res.body.data);
    return res.body.data as { id: string; token: string };
  };
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  const cairn = useCairn({
    env: { CAIRN_MASTER_KEY: randomSecret() },
    rateLimits: { user: 700 },
    issueToken: false,
  });
  beforeAll(async () => {
    expectDocumented = openApiValidator((await http(cairn.url, 'GET', '/openapi.json')).body);
    await issue({ name: 'dashboards', kind: 'service_account', expires_in_days: 7 });
    await issue({ name: 'reporting', scopes: ['workflows:read'], businesses: ['acme', 'globex'] });
    await issue({ name: 'old' });
    const revoked = await http(cairn.url, 'DELETE', `/api/v1/tokens/${issued[2]!.id}`, {
      headers: cairn.master,
    });
    expect(revoked.status).toBe(204);
  });

  it('tells a token who it is, whatever its scopes, and what budget it is charged against', async () => {
    const service = await http(cairn.url, 'GET', '/api/v1/tokens/self', {
      headers: bearer(issued[0]!.token),
    });
    expect(service.status).toBe(200);
    expectDocumented('get', '/api/v1/tokens/self', service);
    expect(service.body.data).toEqual({
      id: issued[0]!.id,
      name: 'dashboards',
      scopes: ['analytics:read'],
      businesses: ['acme'],
      kind: 'service_account',
      expires_at: expect.any(String),
      rate_limit: { tier: 'service_account', limit: 5000, window_seconds: 60 },
    });
    expect(Date.parse(service.body.data.expires_at) - Date.now()).toBeGreaterThan(6 * 86_400_000);
    // The budget it reports is the one its headers are charged against.
    expect(service.headers.get('x-ratelimit-limit')).toBe('5000');

    const user = await http(cairn.url, 'GET', '/api/v1/tokens/self', {
      headers: bearer(issued[1]!.token),
    });
    expect(user.body.data).toMatchObject({
      name: 'reporting',
      scopes: ['workflows:read'],
      businesses: ['acme', 'globex'],
      kind: 'user',
      expires_at: null,
      rate_limit: { tier: 'user', limit: 700, window_seconds: 60 },
    });
    expect(user.headers.get('x-ratelimit-limit')).toBe('700');
    expect(JSON.stringify(user.body)).not.toContain(issued[1]!.token);
  });

  it('refuses the master key, revoked tokens and anonymous callers', async () => {
    const master = await http(cairn.url, 'GET', '/api/v1/tokens/self', {
      headers: cairn.master,
    });
    expect(master.status).toBe(403);
    expect(master.body.detail).toMatch(/master key is not an API token/);
    expectDocumented('get', '/api/v1/tokens/self', master);
    for (const headers of [bearer(issued[2]!.token), {}]) {
      const res = await http(cairn.url, 'GET', '/api/v1/tokens/self', { headers });
      expect(res.status).toBe(401);
      expectDocumented('get', '/api/v1/tokens/self', res);
    }
  });

  it('lists every token to the master key, oldest first, with its state and never a secret', async () => {
    const res = await http(cairn.url, 'GET', '/api/v1/tokens', { headers: cairn.master });
    expect(res.status).toBe(200);
    expectDocumented('get', '/api/v1/tokens', res);
    expect(res.body.data.map((token: { name: string }) => token.name)).toEqual([
      'dashboards',
      'reporting',
      'old',
    ]);
    expect(res.body.data.map((token: { state: string }) => token.state)).toEqual([
      'active',
      'active',
      'revoked',
    ]);
    expect(res.body.data[2].revoked_at).toEqual(expect.any(String));
    expect(res.body.meta).toMatchObject({ total: 3, page: 1, per_page: 20, total_pages: 1 });
    for (const { token } of issued) expect(res.text).not.toContain(token);
    expect(res.text).not.toMatch(/hash|cairn_/);
  });

  it('pages the listing and validates its parameters', async () => {
    const second = await http(cairn.url, 'GET', '/api/v1/tokens?page=2&per_page=2', {
      headers: cairn.master,
    });
    expect(second.status).toBe(200);
    expect(second.body.data.map((token: { id: string }) => token.id)).toEqual([issued[2]!.id]);
    expect(second.body.meta).toMatchObject({ total: 3, page: 2, per_page: 2, total_pages: 2 });

    const bad = await http(cairn.url, 'GET', '/api/v1/tokens?per_page=101&page=0', {
      headers: cairn.master,
    });
    expect(bad.status).toBe(422);
    expectDocumented('get', '/api/v1/tokens', bad);
    expect(bad.body.detail.map((issue: { loc: unknown[] }) => issue.loc)).toEqual(
      expect.arrayContaining([
        ['query', 'per_page'],
        ['query', 'page'],
      ]),
    );

    const user = await http(cairn.url, 'GET', '/api/v1/tokens', {
      headers: bearer(issued[1]!.token),
    });
    expect(user.status).toBe(403);
  });
});
