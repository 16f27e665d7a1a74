import { describe, expect, it } from 'vitest';
import { randomSecret } from '../support/auth.ts';
import { useCairn } from '../support/cairn.ts';
import { type HttpResult, http } from '../support/http.ts';

const rate = (res: HttpResult) => ({
  limit: Number(res.headers.get('x-ratelimit-limit')),
  remaining: Number(res.headers.get('x-ratelimit-remaining')),
  reset: Number(res.headers.get('x-ratelimit-reset')),
});

const env = { CAIRN_MASTER_KEY: randomSecret() };

describe('rate limits at the contract defaults', () => {
  const cairn = useCairn({ env });

  it('lets 60 anonymous requests through a minute, counts down exactly, refuses the 61st', async () => {
    for (let n = 1; n <= 60; n += 1) {
      const res = await http(cairn.url, 'GET', '/api/v1/tasks/some-task');
      expect(res.status).toBe(401);
      expect(rate(res)).toMatchObject({ limit: 60, remaining: 60 - n });
    }
    const refused = await http(cairn.url, 'GET', '/api/v1/tasks/some-task');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(refused.body).toMatchObject({ status: 429, title: 'Too Many Requests' });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const now = Date.now() / 1000;
    expect(rate(refused).remaining).toBe(0);
    expect(rate(refused).reset).toBeGreaterThan(now);
    expect(rate(refused).reset).toBeLessThanOrEqual(Math.ceil(now) + 60);
  });

  it('charges an invalid token to the address, and a probe to nobody', async () => {
    const invalid = await http(cairn.url, 'GET', '/api/v1/tasks/x', {
      headers: { Authorization: 'Bearer cairn_not-a-token' },
    });
    expect(invalid.status).toBe(429);
    const health = await http(cairn.url, 'GET', '/healthz');
    expect(health.status).toBe(200);
    expect(rate(health)).toMatchObject({ limit: 60, remaining: 0 });
  });

  it('gives user tokens 1000, service accounts 5000 and the master key its own 1000', async () => {
    const user = await cairn.token({ businesses: ['acme'] });
    const robot = await cairn.token({ businesses: ['acme'], kind: 'service_account' });
    for (let n = 1; n <= 3; n += 1) {
      expect(
        rate(await http(cairn.url, 'GET', '/api/v1/tasks/x', { headers: user })),
      ).toMatchObject({ limit: 1000, remaining: 1000 - n });
      expect(
        rate(await http(cairn.url, 'GET', '/api/v1/tasks/x', { headers: robot })),
      ).toMatchObject({ limit: 5000, remaining: 5000 - n });
    }
    const master = await http(cairn.url, 'DELETE', '/api/v1/tokens/tok_0000000000000000', {
      headers: cairn.master,
    });
    expect(master.status).toBe(404);
    expect(rate(master)).toMatchObject({ limit: 1000, remaining: 999 });
  });

  it('puts the headers on every error response', async () => {
    const headers = await cairn.token({ businesses: ['acme'] });
    const json = { ...headers, 'content-type': 'application/json' };
    const answers = await Promise.all([
      http(cairn.url, 'GET', '/api/v1/nothing-here', { headers }),
      http(cairn.url, 'GET', '/api/v2/tasks', { headers }),
      http(cairn.url, 'PATCH', '/api/v1/tasks', { headers }),
      http(cairn.url, 'POST', '/api/v1/query', { headers: json, raw: '{"metrics":' }),
      http(cairn.url, 'POST', '/api/v1/query', { headers, body: { metrics: ['nope'] } }),
      http(cairn.url, 'POST', '/api/v1/query', { headers: json, raw: 'x'.repeat(1_048_577) }),
      http(cairn.url, 'DELETE', '/api/v1/tokens/tok_0000000000000000', { headers }),
    ]);
    expect(answers.map((res) => res.status)).toEqual([404, 404, 405, 400, 422, 413, 403]);
    for (const res of answers) expect(rate(res).limit).toBe(1000);
    const remaining = answers.map((res) => rate(res).remaining).sort((a, b) => b - a);
    expect(remaining).toEqual([999, 998, 997, 996, 995, 994, 993]);
  });
});

describe('rate limits per principal', () => {
  // Its own engines and Redis prefix, so the first block's counters do not carry over.
  const cairn = useCairn({ env, rateLimits: { user: 3, service_account: 4 } });

  it('keeps one budget per token', async () => {
    const first = await cairn.token({ businesses: ['acme'] });
    const second = await cairn.token({ businesses: ['acme'] });
    const robot = await cairn.token({ businesses: ['acme'], kind: 'service_account' });
    const get = (headers: Record<string, string>) =>
      http(cairn.url, 'GET', '/api/v1/tasks/x', { headers });
    expect((await Promise.all([1, 2, 3].map(() => get(first)))).map((r) => r.status)).toEqual([
      404, 404, 404,
    ]);
    expect((await get(first)).status).toBe(429);
    expect(rate(await get(second))).toMatchObject({ limit: 3, remaining: 2 });
    for (let n = 1; n <= 4; n += 1) expect(rate(await get(robot)).remaining).toBe(4 - n);
    expect((await get(robot)).status).toBe(429);
    expect(rate(await http(cairn.url, 'GET', '/api/v1/tasks/x'))).toMatchObject({
      limit: 60,
      remaining: 59,
    });
  });

  it('still sends the headers when authentication itself fails with a 500', async () => {
    const headers = await cairn.token({ businesses: ['acme'] });
    await cairn.engines.postgres.close();
    const res = await http(cairn.url, 'GET', '/api/v1/tasks/x', { headers });
    expect(res.status).toBe(500);
    expect(res.text).not.toMatch(/select|api_tokens|at /i);
    expect(rate(res).limit).toBe(60);
    // close() would destroy the database a second time.
    cairn.engines.postgres.close = async () => {};
  });
});
