import { describe, expect, it } from 'vitest';
import { useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';

/** The answer minus what differs between two runs of the same query. */
const stable = (metadata: Record<string, unknown>) => ({
  ...metadata,
  elapsed_ms: undefined,
  query_id: undefined,
  cache: undefined,
  data_as_of: undefined,
  rows_read: undefined,
  bytes_read: undefined,
});

describe('POST /api/v1/query/batch', () => {
  const cairn = useCairn({
    businesses: ['acme'],
    scopes: ['analytics:read', 'workflows:write'],
    rateLimits: { user: 60 },
  });

  const batch = (queries: unknown, headers: Record<string, string> = cairn.auth) =>
    http(cairn.url, 'POST', '/api/v1/query/batch', { headers, body: { queries } });

  it('answers each query in order, as /query answers it', async () => {
    for (const name of ['a', 'b', 'c']) {
      const created = await http(cairn.url, 'POST', '/api/v1/tasks', {
        headers: cairn.auth,
        body: { business: 'acme', name, project: 'p' },
      });
      expect(created.status).toBe(201);
    }
    // Every fact projected, so the batch and the single queries read the same ones.
    await waitFor(
      async () => {
        const res = await http(cairn.url, 'POST', '/api/v1/query', {
          headers: cairn.auth,
          body: { metrics: ['tasks_created'], period: 'all_time' },
        });
        return res.body.data[0]?.tasks_created === 3;
      },
      { timeoutMs: 60_000 },
    );
    const queries = [
      { metrics: ['tasks_created'], business: 'acme', period: 'all_time' },
      { metrics: ['open_tasks'], dimensions: ['project'], period: 'all_time' },
      { metrics: ['tasks_completed', 'tasks_created'], period: 'last_7_days' },
    ];
    const res = await batch(queries);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toHaveLength(3);
    for (const [i, query] of queries.entries()) {
      const item = res.body.data[i];
      const single = await http(cairn.url, 'POST', '/api/v1/query', {
        headers: cairn.auth,
        body: query,
      });
      expect(item.status).toBe(single.status);
      expect(item.metadata.query.metrics).toEqual(query.metrics);
      expect(item.data).toEqual(single.body.data);
      expect(stable(item.metadata)).toEqual(stable(single.body.metadata));
    }
  });

  it('gives each item its own status: 200, the 422 body, the 404 problem', async () => {
    const queries = [
      { metrics: ['tasks_created'] },
      { metrics: ['nope'] },
      { metrics: ['tasks_created'], business: 'globex' },
      { metrics: ['tasks_created'], date_range: ['2026-02-01', '2026-01-31'] },
      { metrics: ['tasks_created'], period: 'yesterday' },
    ];
    const res = await batch(queries);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.map((item: { status: number }) => item.status)).toEqual([
      200, 422, 404, 422, 200,
    ]);
    const [, badMetric, foreign, badRange] = res.body.data;
    // The same bodies /query answers with, item by item.
    for (const [at, item] of [
      [1, badMetric],
      [2, foreign],
      [3, badRange],
    ] as const) {
      const single = await http(cairn.url, 'POST', '/api/v1/query', {
        headers: cairn.auth,
        body: queries[at],
      });
      expect(single.status).toBe(item.status);
      expect({ ...item.error, instance: undefined, request_id: undefined }).toEqual({
        ...single.body,
        instance: undefined,
        request_id: undefined,
      });
    }
    expect(badMetric.error.detail[0]).toMatchObject({ loc: ['body', 'metrics', 0], type: 'enum' });
    expect(foreign.error).toMatchObject({
      status: 404,
      title: 'Not Found',
      detail: "No business 'globex' is readable with this token.",
    });
    expect(foreign.data).toBeUndefined();
    expect(badRange.error.detail[0].loc).toEqual(['body', 'date_range']);
  });

  it('answers an item holding a NUL character with its own 422, the others with theirs', async () => {
    const res = await batch([{ metrics: ['tasks_created'] }, { x: { 'a\u0000b': 'c\u0000' } }]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.map((item: { status: number }) => item.status)).toEqual([200, 422]);
    expect(res.body.data[1].error.detail).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'string_nul' })]),
    );
  });

  it('computes identical queries once, defaults filled in', async () => {
    const query = { metrics: ['tasks_created'], dimensions: ['project'], period: 'all_time' };
    // Each query computed afresh, so two runs of it would carry two query ids.
    const fresh = { ...cairn.auth, 'Cache-Control': 'no-cache' };
    const res = await batch(
      [query, { metrics: ['open_tasks'] }, { ...query, limit: undefined }, { ...query }],
      fresh,
    );
    expect(res.status, res.text).toBe(200);
    const [first, other, same, again] = res.body.data;
    expect(first.status).toBe(200);
    expect(first.metadata.cache).toBe('miss');
    expect(same.metadata.query_id).toBe(first.metadata.query_id);
    expect(again.metadata.query_id).toBe(first.metadata.query_id);
    expect(other.metadata.query_id).not.toBe(first.metadata.query_id);
    const twice = await batch([{ metrics: ['open_tasks'] }, { metrics: ['open_tasks'] }], fresh);
    expect(twice.body.data[1].metadata.query_id).toBe(twice.body.data[0].metadata.query_id);
    const apart = await http(cairn.url, 'POST', '/api/v1/query', { headers: fresh, body: query });
    expect(apart.body.metadata.query_id).not.toBe(first.metadata.query_id);
  });

  it.each([
    [[], 'too_short'],
    [Array.from({ length: 21 }, () => ({ metrics: ['tasks_created'] })), 'too_long'],
  ])('refuses %# a batch of no or more than 20 queries as a whole (422)', async (queries, type) => {
    const res = await batch(queries);
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'queries'], type });
  });

  it('refuses a body without queries, or with other members', async () => {
    for (const body of [
      {},
      { queries: [{ metrics: ['tasks_created'] }], extra: 1 },
      [],
      { queries: [{ metrics: ['tasks_created'] }, 'tasks_created'] },
    ]) {
      const res = await http(cairn.url, 'POST', '/api/v1/query/batch', {
        headers: cairn.auth,
        body,
      });
      expect(res.status, JSON.stringify(body)).toBe(422);
    }
  });

  it('charges the rate limit one request per query, and refuses a batch past it whole', async () => {
    // A token of its own: a budget of 60 this test alone spends.
    const auth = await cairn.token({ businesses: ['acme'], scopes: ['analytics:read'] });
    const remaining = (res: { headers: Headers }) =>
      Number(res.headers.get('x-ratelimit-remaining'));
    const one = { metrics: ['tasks_created'] };
    const twenty = Array.from({ length: 20 }, () => one);
    const first = await batch([one], auth);
    expect(first.status).toBe(200);
    expect(remaining(first)).toBe(59);
    const five = await batch([one, one, one, { metrics: ['open_tasks'] }, one], auth);
    expect(five.status).toBe(200);
    expect(remaining(five)).toBe(54);
    for (const left of [34, 14]) {
      const full = await batch(twenty, auth);
      expect(full.status).toBe(200);
      expect(full.body.data).toHaveLength(20);
      expect(remaining(full)).toBe(left);
    }
    // 20 do not fit the 14 left: refused whole, and only the request itself is charged.
    const refused = await batch(twenty, auth);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.body.detail).toContain('counts as 20 requests');
    expect(remaining(refused)).toBe(13);
    // What is left still serves a batch that fits it exactly.
    const fits = await batch(
      Array.from({ length: 13 }, () => one),
      auth,
    );
    expect(fits.status).toBe(200);
    expect(remaining(fits)).toBe(0);
    const single = await http(cairn.url, 'POST', '/api/v1/query', { headers: auth, body: one });
    expect(single.status).toBe(429);
  });

  it('is published with its response schema', async () => {
    const doc = (await http(cairn.url, 'GET', '/openapi.json')).body;
    const operation = doc.paths['/api/v1/query/batch'].post;
    expect(operation.operationId).toBe('runQueryBatch');
    const body = operation.requestBody.content['application/json'].schema;
    expect(body.properties.queries).toMatchObject({ minItems: 1, maxItems: 20 });
    // An item is meant to be a /query body, and any object gets its own answer.
    expect(body.properties.queries.items.anyOf[0].properties.metrics).toBeDefined();
    expect(body.properties.queries.items.anyOf[1]).toEqual({ type: 'object' });
    expect(
      operation.responses['200'].content['application/json'].schema.properties.data.items.properties
        .status,
    ).toBeDefined();
  });
});
