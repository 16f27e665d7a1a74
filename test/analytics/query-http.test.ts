import { beforeAll, describe, expect, it } from 'vitest';
import { METRIC_NAMES } from '../../libs/analytics/catalog/catalog.ts';
import { PERIODS } from '../../libs/analytics/period/period.ts';
import { useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';
import { openApiValidator } from '../support/openapi-validator.ts';

describe('POST /api/v1/query and GET /api/v1/query/catalog over HTTP', () => {
  const cairn = useCairn({
    env: { CAIRN_QUERY_MAX_ROWS: '50' },
    scopes: ['analytics:read'],
    businesses: ['acme'],
  });

  let expectDocumented: ReturnType<typeof openApiValidator>;
  beforeAll(async () => {
    expectDocumented = openApiValidator((await http(cairn.url, 'GET', '/openapi.json')).body);
  });

  /** Every answer here, whatever its status, must be one the API document describes. */
  const query = async (body: unknown, headers: Record<string, string> = cairn.auth) => {
    const res = await http(cairn.url, 'POST', '/api/v1/query', { body, headers });
    expectDocumented('post', '/api/v1/query', res);
    return res;
  };

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
    [
      { metrics: ['tasks_created'], period: 'today', date_range: ['2026-01-01', '2026-01-31'] },
      ['body', 'date_range'],
      'value_error',
    ],
    [
      { metrics: ['tasks_created'], date_range: ['2026-02-01', '2026-01-31'] },
      ['body', 'date_range'],
      'date_range',
    ],
    [
      { metrics: ['tasks_created'], date_range: ['2016-01-01', '2026-01-01'] },
      ['body', 'date_range'],
      'date_range',
    ],
    [
      { metrics: ['tasks_created'], date_range: ['2026-02-30', '2026-03-01'] },
      ['body', 'date_range', 0],
      'date_range',
    ],
    [
      { metrics: ['tasks_created'], date_range: ['2026-01-01', '2026-01-02T00:00:00Z'] },
      ['body', 'date_range'],
      'date_range',
    ],
    [
      { metrics: ['tasks_created'], date_range: ['2026-01-01T00:00:00', '2026-01-02T00:00:00'] },
      ['body', 'date_range', 0],
      'date_range',
    ],
    [
      { metrics: ['tasks_created'], date_range: ['2026-01-01T00:00:00Z', '2026-01-01T25:61:61Z'] },
      ['body', 'date_range', 1],
      'date_range',
    ],
    [
      {
        metrics: ['tasks_created'],
        date_range: ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00+99:99'],
      },
      ['body', 'date_range', 1],
      'date_range',
    ],
    [
      { metrics: ['tasks_created'], date_range: ['2026-01-01T00:00:00Z', '2026-06-30T23:59:60Z'] },
      ['body', 'date_range', 1],
      'date_range',
    ],
    [
      { metrics: ['tasks_created'], date_range: ['2026-01-01'] },
      ['body', 'date_range'],
      'too_short',
    ],
    [
      { metrics: ['tasks_created'], period: 'all_time', compare: 'previous_year' },
      ['body', 'compare'],
      'value_error',
    ],
    [{ metrics: ['tasks_created'], compare: 'last_decade' }, ['body', 'compare'], 'enum'],
    [{ metrics: ['tasks_created'], include: ['subtotals'] }, ['body', 'include', 0], 'enum'],
    [{ metrics: ['tasks_created'], offset: -1 }, ['body', 'offset'], 'greater_than_equal'],
    [
      {
        metrics: ['tasks_created'],
        dimensions: ['project', 'hour'],
        date_range: ['2024-01-01', '2025-12-31'],
      },
      ['body', 'dimensions', 1],
      'too_many_buckets',
    ],
    [
      {
        metrics: ['tasks_created'],
        filters: [{ dimension: 'status', op: 'in', values: ['open', null] }],
      },
      ['body', 'filters', 0, 'values', 1],
      'value_error',
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
    const res = await http(cairn.url, 'GET', '/api/v1/query/catalog', { headers: cairn.auth });
    expect(res.status).toBe(200);
    expectDocumented('get', '/api/v1/query/catalog', res);
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
      'hour',
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
    const writer = await cairn.token({ scopes: ['workflows:read'], businesses: ['acme'] });
    expect(
      (await http(cairn.url, 'GET', '/api/v1/query/catalog', { headers: writer })).status,
    ).toBe(403);
  });

  it('answers a series with every bucket, null labels, comparisons and totals', async () => {
    const writer = await cairn.token({ scopes: ['workflows:write'], businesses: ['acme'] });
    const created = await http(cairn.url, 'POST', '/api/v1/tasks', {
      body: { business: 'acme', name: 'No project yet' },
      headers: writer,
    });
    expect(created.status).toBe(201);
    // The projector runs beside the API: wait until the new task is counted.
    const series = await waitFor(
      async () => {
        const res = await query({
          metrics: ['tasks_created', 'completion_rate', 'open_tasks'],
          dimensions: ['day'],
          period: 'last_7_days',
          compare: 'previous_period',
          include: ['totals'],
        });
        expect(res.status).toBe(200);
        return res.body.metadata.totals.tasks_created === 1 && res;
      },
      { timeoutMs: 60_000 },
    );
    expect(series.body.data).toHaveLength(7);
    expect(series.body.metadata.total_rows).toBe(7);
    expect(series.body.data[0]).toMatchObject({
      tasks_created: 0,
      completion_rate: null,
      comparison: { tasks_created: 0, completion_rate: null },
      change: { tasks_created: null },
    });
    expect(series.body.metadata).toMatchObject({
      comparison: { cut_at_elapsed: true },
      totals: { tasks_created: 1, completion_rate: 0 },
      totals_comparison: { tasks_created: 0, completion_rate: null },
    });
    expect(series.body.metadata.incomplete_from).toBe(
      `${series.body.data.at(-1).day}T00:00:00.000Z`,
    );
    const none = await query({
      metrics: ['tasks_created'],
      dimensions: ['project'],
      filters: [{ dimension: 'project', op: 'eq', values: [null] }],
    });
    expect(none.body.data).toEqual([{ project: null, tasks_created: 1 }]);
  });

  it('keeps serving after a client hangs up mid-query', async () => {
    const controller = new AbortController();
    const abandoned = fetch(`${cairn.url}/api/v1/query`, {
      method: 'POST',
      headers: { ...cairn.auth, 'content-type': 'application/json' },
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
