import { describe, expect, it } from 'vitest';
import { READINESS_HOLD_MS } from '../../apps/server/readiness-memo.ts';
import { useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('HTTP platform conventions', () => {
  const cairn = useCairn({ businesses: ['acme'] });

  const expectProblem = (
    res: Awaited<ReturnType<typeof http>>,
    status: number,
    instance: string,
  ) => {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({
      status,
      instance,
      title: expect.any(String),
      detail: expect.any(String),
    });
    expect(res.body.type).toMatch(/^urn:cairn:problem:/);
    expect(res.body.request_id).toBe(res.headers.get('x-request-id'));
  };

  it('echoes a UUID v4 X-Request-ID into the header and meta.request_id', async () => {
    const id = '3f2b8c1e-9d4a-4f6b-8a7c-1e2d3c4b5a69';
    const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
      body: { business: 'acme', name: 'Ship it' },
      headers: { 'X-Request-ID': id, ...cairn.auth },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('x-request-id')).toBe(id);
    expect(res.body.meta.request_id).toBe(id);
    expect(Date.parse(res.body.meta.timestamp)).not.toBeNaN();
  });

  it('replaces a missing or non-UUID-v4 request id with a fresh one', async () => {
    for (const sent of [
      undefined,
      'not-a-uuid',
      '3f2b8c1e-9d4a-1f6b-8a7c-1e2d3c4b5a69',
      '<script>',
    ]) {
      const res = await http(cairn.url, 'GET', '/healthz', {
        headers: sent ? { 'X-Request-ID': sent } : {},
      });
      const id = res.headers.get('x-request-id');
      expect(id).toMatch(UUID);
      expect(id).not.toBe(sent);
    }
  });

  it('answers bad input with the 422 detail array as plain JSON', async () => {
    const res = await http(cairn.url, 'POST', '/api/v1/query', {
      body: { metrics: ['tasks_created', 7], dimensions: 'day', period: 'someday', colour: 'red' },
      headers: cairn.auth,
    });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body.detail).toEqual(
      expect.arrayContaining([
        { loc: ['body', 'colour'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
        { loc: ['body', 'metrics', 1], msg: 'Input should be a valid string', type: 'string_type' },
        { loc: ['body', 'dimensions'], msg: 'Input should be a valid list', type: 'list_type' },
        expect.objectContaining({ loc: ['body', 'period'], type: 'enum' }),
      ]),
    );
  });

  it('reports missing members, an empty body and a non-object body at the right loc', async () => {
    const missing = await http(cairn.url, 'POST', '/api/v1/query', {
      body: {},
      headers: cairn.auth,
    });
    expect(missing.body.detail).toEqual([
      { loc: ['body', 'metrics'], msg: 'Field required', type: 'missing' },
    ]);
    const empty = await http(cairn.url, 'POST', '/api/v1/query', {
      body: { metrics: [] },
      headers: cairn.auth,
    });
    expect(empty.body.detail).toEqual([
      { loc: ['body', 'metrics'], msg: 'List should have at least 1 item', type: 'too_short' },
    ]);
    const none = await http(cairn.url, 'POST', '/api/v1/query', { headers: cairn.auth });
    expect(none.status).toBe(422);
    expect(none.body.detail).toEqual([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
    const array = await http(cairn.url, 'POST', '/api/v1/query', {
      body: ['tasks_created'],
      headers: cairn.auth,
    });
    expect(array.body.detail[0]).toMatchObject({ loc: ['body'], type: 'model_attributes_type' });
    const tz = await http(cairn.url, 'POST', '/api/v1/query', {
      body: { metrics: ['tasks_created'], timezone: 'Mars/Olympus' },
      headers: cairn.auth,
    });
    expect(tz.body.detail[0]).toMatchObject({ loc: ['body', 'timezone'] });
  });

  it('validates path parameters', async () => {
    const res = await http(cairn.url, 'GET', `/api/v1/tasks/${'x'.repeat(65)}`, {
      headers: cairn.auth,
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({
      loc: ['path', 'gid'],
      type: 'string_pattern_mismatch',
    });
  });

  it('turns malformed JSON into a 400 problem', async () => {
    const res = await http(cairn.url, 'POST', '/api/v1/query', {
      raw: '{"metrics": [',
      headers: { 'content-type': 'application/json', ...cairn.auth },
    });
    expectProblem(res, 400, '/api/v1/query');
  });

  it('turns a body over 1 MiB into a 413 problem', async () => {
    const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
      body: { business: 'acme', name: 'x'.repeat(1_100_000) },
      headers: cairn.auth,
    });
    expectProblem(res, 413, '/api/v1/tasks');
  });

  it('refuses a non-JSON body with 415', async () => {
    const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
      raw: 'business=acme',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...cairn.auth },
    });
    expectProblem(res, 415, '/api/v1/tasks');
  });

  it('answers unknown routes, unknown API versions and unknown tasks with 404 problems', async () => {
    expectProblem(
      await http(cairn.url, 'GET', '/api/v1/nothing-here'),
      404,
      '/api/v1/nothing-here',
    );
    const v2 = await http(cairn.url, 'POST', '/api/v2/query', {
      body: { metrics: ['tasks_created'] },
      headers: cairn.auth,
    });
    expectProblem(v2, 404, '/api/v2/query');
    expect(v2.body.detail).toContain('v2');
    const unknown = await http(cairn.url, 'GET', '/api/v1/tasks/unknown-gid', {
      headers: cairn.auth,
    });
    expectProblem(unknown, 404, '/api/v1/tasks/unknown-gid');
  });

  it('answers a known path with the wrong method with 405 and Allow', async () => {
    const res = await http(cairn.url, 'DELETE', '/api/v1/query');
    expectProblem(res, 405, '/api/v1/query');
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
  });

  it('hides internals on a 500', async () => {
    await cairn.db.schema.alterTable('tasks').renameTo('tasks_gone').execute();
    try {
      const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
        body: { business: 'acme', name: 'x' },
        headers: cairn.auth,
      });
      expectProblem(res, 500, '/api/v1/tasks');
      expect(res.text).not.toMatch(/tasks_gone|relation|select|insert|at .*\.ts/i);
    } finally {
      await cairn.db.schema.alterTable('tasks_gone').renameTo('tasks').execute();
    }
  });

  it('reports liveness and readiness of every engine', async () => {
    expect((await http(cairn.url, 'GET', '/healthz')).body.status).toBe('ok');
    const ready = await http(cairn.url, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({
      postgres: 'ok',
      clickhouse: 'ok',
      queue: 'ok',
      rate_limits: 'ok',
      query_cache: 'ok',
    });
    expect(ready.headers.get('x-powered-by')).toBeNull();
  });

  it('asks the engines about readiness at most about once a second, however many ask it', async () => {
    const { engines } = cairn;
    const check = engines.check;
    let checks = 0;
    engines.check = () => {
      checks += 1;
      return check.call(engines);
    };
    try {
      // Expire whatever an earlier test left held.
      await new Promise((resolve) => setTimeout(resolve, READINESS_HOLD_MS));
      checks = 0;
      const started = performance.now();
      const statuses: number[] = [];
      for (let burst = 0; burst < 20; burst++) {
        const answers = await Promise.all(
          Array.from({ length: 50 }, () => http(cairn.url, 'GET', '/readyz')),
        );
        statuses.push(...answers.map((res) => res.status));
      }
      const seconds = (performance.now() - started) / 1000;
      // Each a readiness answer (on a busy machine an engine may be slow to a check: 503).
      expect(statuses.filter((status) => status !== 200 && status !== 503)).toEqual([]);
      expect(statuses).toHaveLength(1_000);
      expect(checks).toBeGreaterThanOrEqual(1);
      expect(checks).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
      // The answer is not held for longer: a second on, the engines are asked again.
      const before = checks;
      await new Promise((resolve) => setTimeout(resolve, READINESS_HOLD_MS + 100));
      await http(cairn.url, 'GET', '/readyz');
      expect(checks).toBe(before + 1);
    } finally {
      engines.check = check;
    }
  }, 120_000);
});
