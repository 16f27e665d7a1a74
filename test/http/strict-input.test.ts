import { brotliCompressSync, gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { randomSecret } from '../support/auth.ts';
import { unlimited, useCairn } from '../support/cairn.ts';
import { type HttpResult, http } from '../support/http.ts';

/** Inputs a hostile or careless caller sends, each answered by a 4xx at the right place. */
describe('strict input', () => {
  let gid: string;
  const cairn = useCairn({
    env: { CAIRN_MASTER_KEY: randomSecret() },
    rateLimits: unlimited(),
    businesses: ['si'],
  });
  beforeAll(async () => {
    const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
      headers: cairn.auth,
      body: { business: 'si', name: 'seed', project: 'p', assignee: 'a' },
    });
    gid = res.body.data.gid;
  });

  const expectIssueAt = (res: HttpResult, loc: Array<string | number>, type?: string) => {
    expect(res.status, res.text).toBe(422);
    const issue = res.body.detail.find(
      (item: { loc: unknown }) => JSON.stringify(item.loc) === JSON.stringify(loc),
    );
    expect(issue, res.text).toBeDefined();
    if (type) expect(issue.type).toBe(type);
  };
  const expectProblem = (res: HttpResult, status: number) => {
    expect(res.status, res.text).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body.status).toBe(status);
  };

  const MALFORMED_INTEGERS = [
    '0x5',
    '1e1',
    '+3',
    ' 1',
    '1 ',
    'Infinity',
    '-Infinity',
    '1e400',
    '5.0',
    '',
  ];

  it('reads integers only as ^-?[0-9]+$, on every integer parameter', async () => {
    const cases: Array<[string, string]> = [
      [`/api/v1/tasks/${gid}/dependents`, 'limit'],
      [`/api/v1/tasks/${gid}/dependencies`, 'limit'],
      ['/api/v1/tasks', 'page'],
      ['/api/v1/tasks', 'per_page'],
    ];
    for (const [path, name] of cases) {
      for (const value of MALFORMED_INTEGERS) {
        const res = await http(cairn.url, 'GET', `${path}?${name}=${encodeURIComponent(value)}`, {
          headers: cairn.auth,
        });
        expectIssueAt(res, ['query', name], 'int_parsing');
      }
      const ok = await http(cairn.url, 'GET', `${path}?${name}=5`, { headers: cairn.auth });
      expect(ok.status, ok.text).toBe(200);
    }
  });

  it('keeps bounds exact for long digit strings', async () => {
    const res = await http(
      cairn.url,
      'GET',
      `/api/v1/tasks/${gid}/dependents?limit=99999999999999999999999`,
      { headers: cairn.auth },
    );
    expectIssueAt(res, ['query', 'limit'], 'less_than_equal');
    const page = await http(cairn.url, 'GET', `/api/v1/tasks?page=${'9'.repeat(400)}`, {
      headers: cairn.auth,
    });
    expectIssueAt(page, ['query', 'page'], 'less_than_equal');
  });

  it('refuses leap seconds and offsets no zone uses in date-time filters', async () => {
    for (const value of [
      '2026-06-30T23:59:60Z',
      '9999-12-31T23:59:59-23:59',
      '2026-01-01T00:00:00+15:00',
      '2026-02-29T00:00:00Z',
      '0001-01-01T00:00:00+01:00',
    ]) {
      const res = await http(
        cairn.url,
        'GET',
        `/api/v1/tasks?${new URLSearchParams({ 'created_at[gte]': value })}`,
        { headers: cairn.auth },
      );
      expectIssueAt(res, ['query', 'created_at[gte]']);
    }
    const ok = await http(
      cairn.url,
      'GET',
      `/api/v1/tasks?${new URLSearchParams({ 'created_at[gte]': '2026-01-01T00:00:00+14:00' })}`,
      { headers: cairn.auth },
    );
    expect(ok.status, ok.text).toBe(200);
  });

  it('answers broken percent-encodings in the path with a 400 problem', async () => {
    for (const path of [
      '/api/v1/tasks/%',
      '/api/v1/tasks/%E0%A4%A',
      `/api/v1/tasks/${gid}%ZZ/dependents`,
    ]) {
      expectProblem(await http(cairn.url, 'GET', path, { headers: cairn.auth }), 400);
    }
  });

  it('answers corrupt compressed bodies with a 400 problem and a bomb with a 413', async () => {
    const json = Buffer.from(JSON.stringify({ business: 'si', name: 'zipped' }));
    const send = (encoding: string, body: Buffer) =>
      http(cairn.url, 'POST', '/api/v1/tasks', {
        headers: {
          ...cairn.auth,
          'content-type': 'application/json',
          'content-encoding': encoding,
        },
        raw: body,
      });
    const gzip = gzipSync(json);
    for (const [encoding, body] of [
      ['gzip', Buffer.from('this is not gzip')],
      ['gzip', gzip.subarray(0, gzip.length - 6)],
      ['br', Buffer.from('this is not brotli at all')],
      ['deflate', Buffer.from('nope')],
    ] as const) {
      expectProblem(await send(encoding, body), 400);
    }
    expectProblem(await send('gzip', gzipSync(Buffer.alloc(8 * 1_048_576, 32))), 413);
    expect((await send('br', brotliCompressSync(json))).status).toBe(201);
  });

  it('answers a JSON body that is not an object with a 422, not a 400', async () => {
    for (const raw of ['null', '5', '"text"', 'true']) {
      const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
        headers: { ...cairn.auth, 'content-type': 'application/json' },
        raw,
      });
      expectIssueAt(res, ['body'], 'model_attributes_type');
    }
  });

  it('refuses lone surrogates on create and update alike, storing nothing', async () => {
    for (const member of ['name', 'project', 'assignee']) {
      const raw = `{"business":"si","name":"n","${member}":"x\\ud800y"}`;
      const created = await http(cairn.url, 'POST', '/api/v1/tasks', {
        headers: { ...cairn.auth, 'content-type': 'application/json' },
        raw,
      });
      expectIssueAt(created, ['body', member], 'string_unicode');
      const updated = await http(cairn.url, 'PUT', `/api/v1/tasks/${gid}`, {
        headers: { ...cairn.auth, 'content-type': 'application/json' },
        raw: `{"${member}":"\\udc00"}`,
      });
      expectIssueAt(updated, ['body', member], 'string_unicode');
    }
    const task = await http(cairn.url, 'GET', `/api/v1/tasks/${gid}`, { headers: cairn.auth });
    expect(task.body.data).toMatchObject({ name: 'seed', project: 'p', assignee: 'a' });
    // A well-formed pair is fine.
    const emoji = await http(cairn.url, 'PUT', `/api/v1/tasks/${gid}`, {
      headers: cairn.auth,
      body: { name: 'seed 😀' },
    });
    expect(emoji.status, emoji.text).toBe(200);
    expect(emoji.body.data.name).toBe('seed 😀');
  });

  it('lists at most 100 issues for a megabyte of bad metrics', async () => {
    const metrics = Array.from({ length: 100_000 }, (_, i) => `m${i}`);
    const res = await http(cairn.url, 'POST', '/api/v1/query', {
      headers: cairn.auth,
      body: { metrics },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail.length).toBeGreaterThan(0);
    expect(res.body.detail.length).toBeLessThanOrEqual(100);
    expect(res.body.detail[0].loc).toEqual(['body', 'metrics']);
  });

  it('answers 401 before reading the body of an unauthenticated request', async () => {
    const malformed = await http(cairn.url, 'POST', '/api/v1/tasks', {
      headers: { 'content-type': 'application/json' },
      raw: '{"not json',
    });
    expectProblem(malformed, 401);
    const bomb = await http(cairn.url, 'POST', '/api/v1/tasks', {
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      raw: gzipSync(Buffer.alloc(50 * 1_048_576, 32)),
    });
    expect(bomb.status).toBe(401);
  });
});
