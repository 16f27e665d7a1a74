import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../apps/server/cairn.ts';
import { METRIC_NAMES } from '../libs/analytics/catalog.ts';
import { PERIODS } from '../libs/analytics/period.ts';
import { authHeader } from './support/auth.ts';
import { type TestConfig, testConfig } from './support/engines.ts';
import { http } from './support/http.ts';

describe('POST /api/v1/query and GET /api/v1/query/catalog over HTTP', () => {
  let setup: TestConfig;
  let cairn: Cairn;
  let auth: Record<string, string>;
  beforeAll(async () => {
    setup = await testConfig({ CAIRN_QUERY_MAX_ROWS: '50' });
    cairn = await startCairn({ config: setup.config });
    auth = await authHeader(cairn, { scopes: ['analytics:read'], businesses: ['acme'] });
  });
  afterAll(async () => {
    await cairn.close();
    await setup.cleanup();
  });

  const query = (body: unknown, headers = auth) =>
    http(cairn.url, 'POST', '/api/v1/query', { body, headers });

  it.each([
    [{ metrics: [] }, ['body', 'metrics'], 'too_short'],
    [{ metrics: ['nope'] }, ['body', 'metrics', 0], 'enum'],
    [{ metrics: ['tasks_created'], dimensions: ['colour'] }, ['body', 'dimensions', 0], 'enum'],
    [{ metrics: ['tasks_created'], period: 'fortnight' }, ['body', 'period'], 'enum'],
    [{ metrics: ['tasks_created'], timezone: 'Mars/Olympus' }, ['body', 'timezone'], 'timezone'],
    [{ metrics: ['tasks_created'], timezone: '+05:30' }, ['body', 'timezone'], 'timezone'],
    [{ metrics: ['tasks_created'], colour: 'red' }, ['body', 'colour'], 'extra_forbidden'],
    [{ metrics: 'tasks_created' }, ['body', 'metrics'], 'list_type'],
    [{ metrics: ['tasks_created'], limit: 51 }, ['body', 'limit'], 'less_than_equal'],
    [{ metrics: ['tasks_created'], limit: 0 }, ['body', 'limit'], 'greater_than_equal'],
    [{ metrics: ['tasks_created'], limit: 'ten' }, ['body', 'limit'], 'int_parsing'],
    [
      { metrics: ['tasks_created'], dimensions: ['day', 'week'] },
      ['body', 'dimensions', 1],
      'value_error',
    ],
    [
      {
        metrics: ['tasks_created'],
        filters: [{ dimension: 'project', op: 'like', values: ['a'] }],
      },
      ['body', 'filters', 0, 'op'],
      'enum',
    ],
    [
      {
        metrics: ['tasks_created'],
        filters: [{ dimension: 'project', op: 'eq', values: ['a', 'b'] }],
      },
      ['body', 'filters', 0, 'values'],
      'value_error',
    ],
    [
      { metrics: ['tasks_created'], filters: [{ dimension: 'project', op: 'in', values: [] }] },
      ['body', 'filters', 0, 'values'],
      'too_short',
    ],
    [
      { metrics: ['tasks_created'], filters: [{ dimension: 'project', op: 'in' }] },
      ['body', 'filters', 0, 'values'],
      'missing',
    ],
    [
      { metrics: ['tasks_created'], order_by: [{ field: 'open_tasks' }] },
      ['body', 'order_by', 0, 'field'],
      'value_error',
    ],
    [
      { metrics: ['tasks_created'], order_by: [{ field: 'tasks_created', direction: 'up' }] },
      ['body', 'order_by', 0, 'direction'],
      'enum',
    ],
  ])('rejects %j with 422 at %j', async (body, loc, type) => {
    const res = await query(body);
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body.detail).toEqual(
      expect.arrayContaining([expect.objectContaining({ loc, type })]),
    );
  });

  it('answers 404 for a business outside the token, 401 without one', async () => {
    const outside = await query({ metrics: ['tasks_created'], business: 'globex' });
    expect(outside.status).toBe(404);
    expect(outside.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await query({ metrics: ['tasks_created'] }, {})).status).toBe(401);
  });

  it('answers a valid query with data, metadata and named columns', async () => {
    const res = await query({
      metrics: ['tasks_created', 'open_tasks', 'completion_rate'],
      dimensions: ['status'],
      period: 'last_7_days',
      timezone: 'America/New_York',
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    expect(res.body.metadata.query.period.timezone).toBe('America/New_York');
    expect(res.body.metadata.columns.map((c: { name: string }) => c.name)).toEqual([
      'status',
      'tasks_created',
      'open_tasks',
      'completion_rate',
    ]);
  });

  it('accepts any spelling of a zone and runs it under its IANA name', async () => {
    // ClickHouse loads zones by exact name: 'utc' there is an error, not UTC.
    for (const [sent, resolved] of [
      ['utc', 'UTC'],
      ['europe/paris', 'Europe/Paris'],
      ['US/Pacific', 'America/Los_Angeles'],
    ]) {
      const res = await query({ metrics: ['tasks_created'], dimensions: ['day'], timezone: sent });
      expect(res.status).toBe(200);
      expect(res.body.metadata.query.period.timezone).toBe(resolved);
    }
  });

  it('serves the catalog with descriptions and units, never SQL', async () => {
    const res = await http(cairn.url, 'GET', '/api/v1/query/catalog', { headers: auth });
    expect(res.status).toBe(200);
    const catalog = res.body.data;
    expect(catalog.metrics.map((m: { name: string }) => m.name)).toEqual(METRIC_NAMES);
    expect(
      catalog.metrics.find((m: { name: string }) => m.name === 'completion_rate'),
    ).toMatchObject({
      unit: 'ratio',
      type: 'number',
      measured: 'during_period',
    });
    expect(catalog.dimensions.map((d: { name: string }) => d.name)).toEqual([
      'day',
      'week',
      'month',
      'quarter',
      'business',
      'project',
      'assignee',
      'status',
    ]);
    expect(catalog.periods.map((p: { name: string }) => p.name)).toEqual(PERIODS);
    expect(res.text).not.toMatch(/countIf|SELECT/);
    expect((await http(cairn.url, 'GET', '/api/v1/query/catalog')).status).toBe(401);
    const writer = await authHeader(cairn, { scopes: ['workflows:read'], businesses: ['acme'] });
    expect(
      (await http(cairn.url, 'GET', '/api/v1/query/catalog', { headers: writer })).status,
    ).toBe(403);
  });

  it('keeps serving after a client hangs up mid-query', async () => {
    const controller = new AbortController();
    const abandoned = fetch(`${cairn.url}/api/v1/query`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        metrics: ['blocked_tasks', 'open_tasks'],
        dimensions: ['day'],
        period: 'all_time',
      }),
      signal: controller.signal,
    });
    controller.abort();
    await expect(abandoned).rejects.toThrow();
    const next = await query({ metrics: ['tasks_created'] });
    expect(next.status).toBe(200);
  });
});
