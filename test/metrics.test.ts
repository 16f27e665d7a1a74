import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../apps/server/cairn.ts';
import { createLogger } from '../libs/observability/logger.ts';
import { authHeader } from './support/auth.ts';
import { type TestConfig, testConfig, waitFor } from './support/engines.ts';
import { http } from './support/http.ts';
import { parseMetrics, type Sample, sampleValue } from './support/prometheus.ts';

describe('GET /metrics and request logs after real traffic', () => {
  let setup: TestConfig;
  let cairn: Cairn;
  let auth: Record<string, string>;
  const logLines: string[] = [];

  beforeAll(async () => {
    // One row per answer, so a two-business query is truncated: a warning to count.
    setup = await testConfig({ CAIRN_QUERY_MAX_ROWS: '1' });
    const logger = createLogger('info', {
      write: (line: string) => {
        logLines.push(line);
      },
    });
    cairn = await startCairn({ config: setup.config, logger });
    auth = await authHeader(cairn, { businesses: ['m_one', 'm_two'] });
  });
  afterAll(async () => {
    await cairn.close();
    await setup.cleanup();
  });

  let samples: Sample[];
  let text: string;
  const gids: string[] = [];

  it('serves Prometheus text with every family after tasks, queries and errors', async () => {
    for (const business of ['m_one', 'm_two', 'm_two']) {
      const created = await http(cairn.url, 'POST', '/api/v1/tasks', {
        body: { business, name: 'secret-task-name-123' },
        headers: auth,
      });
      expect(created.status).toBe(201);
      gids.push(created.body.data.gid);
    }
    for (const gid of gids) {
      expect((await http(cairn.url, 'GET', `/api/v1/tasks/${gid}`, { headers: auth })).status).toBe(
        200,
      );
    }
    expect((await http(cairn.url, 'GET', '/no/such/place/42')).status).toBe(404);
    expect((await http(cairn.url, 'GET', `/api/v1/tasks/${gids[0]}`)).status).toBe(401);
    const query = { metrics: ['tasks_created'], dimensions: ['business'], period: 'today' };
    await waitFor(async () => {
      const res = await http(cairn.url, 'POST', '/api/v1/query', { body: query, headers: auth });
      return res.body?.metadata?.total_rows === 2;
    });

    const scrape = await http(cairn.url, 'GET', '/metrics');
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get('content-type')).toContain('text/plain');
    text = scrape.text;
    samples = parseMetrics(text);

    const httpCount = (labels: Record<string, string>) =>
      sampleValue(samples, 'http_request_duration_seconds_count', labels);
    expect(httpCount({ method: 'POST', route: '/api/v1/tasks', status: '201' })).toBe(3);
    expect(httpCount({ method: 'GET', route: '/api/v1/tasks/:gid', status: '200' })).toBe(3);
    // Rejected before routing (no token), still labelled with its template.
    expect(httpCount({ method: 'GET', route: '/api/v1/tasks/:gid', status: '401' })).toBe(1);
    expect(httpCount({ method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    expect(httpCount({ method: 'POST', route: '/api/v1/query', status: '200' })).toBeGreaterThan(0);
    // Bounded cardinality: no raw path ever becomes a label.
    for (const gid of gids) expect(text).not.toContain(gid);
    expect(text).not.toContain('/no/such/place');
    expect(samples.every((s) => s.labels.role === 'all')).toBe(true);
  });

  it('has the analytics, projector, limiter and process families with sane values', async () => {
    expect(
      sampleValue(samples, 'cairn_analytics_query_duration_seconds_count', { outcome: 'ok' }),
    ).toBeGreaterThan(0);
    expect(sampleValue(samples, 'cairn_analytics_rows_read_total')).toBeGreaterThan(0);
    expect(sampleValue(samples, 'cairn_analytics_bytes_read_total')).toBeGreaterThan(0);
    expect(
      sampleValue(samples, 'cairn_analytics_warnings_total', { code: 'result_truncated' }),
    ).toBeGreaterThan(0);

    expect(sampleValue(samples, 'cairn_projector_facts_projected_total')).toBeGreaterThanOrEqual(3);
    expect(sampleValue(samples, 'cairn_projector_batch_facts_count')).toBeGreaterThan(0);
    expect(sampleValue(samples, 'cairn_projector_batch_facts_sum')).toBeGreaterThanOrEqual(3);
    expect(sampleValue(samples, 'cairn_projector_batch_duration_seconds_count')).toBeGreaterThan(0);
    // Everything written was visible to /query, so nothing waits.
    expect(sampleValue(samples, 'cairn_outbox_backlog_facts')).toBe(0);
    expect(sampleValue(samples, 'cairn_projector_lag_seconds')).toBe(0);
    expect(
      sampleValue(samples, 'cairn_projector_queue_depth', { state: 'waiting' }),
    ).toBeGreaterThanOrEqual(0);
    expect(
      sampleValue(samples, 'cairn_projector_queue_depth', { state: 'active' }),
    ).toBeGreaterThanOrEqual(0);
    expect(sampleValue(samples, 'cairn_projector_failed_jobs')).toBe(0);

    expect(sampleValue(samples, 'cairn_rate_limit_rejections_total')).toBeGreaterThanOrEqual(0);
    expect(sampleValue(samples, 'cairn_idempotency_replays_total')).toBeGreaterThanOrEqual(0);
    expect(sampleValue(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sampleValue(samples, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    for (const family of ['http_request_duration_seconds', 'cairn_projector_lag_seconds']) {
      expect(text).toContain(`# TYPE ${family} `);
    }
  });

  it('writes one JSON log line per request, without tokens or bodies', async () => {
    const requests = logLines.map((line) => JSON.parse(line)).filter((e) => e.msg === 'request');
    const fetched = await http(cairn.url, 'GET', `/api/v1/tasks/${gids[0]}`, { headers: auth });
    const id = fetched.headers.get('x-request-id');
    const line = await waitFor(async () =>
      logLines.map((l) => JSON.parse(l)).find((e) => e.msg === 'request' && e.request_id === id),
    );
    expect(line).toMatchObject({
      request_id: id,
      method: 'GET',
      route: '/api/v1/tasks/:gid',
      status: 200,
    });
    expect(typeof line.duration_ms).toBe('number');
    expect(requests.filter((e) => e.route === '/api/v1/tasks' && e.status === 201)).toHaveLength(3);
    const all = logLines.join('\n');
    expect(all).not.toContain(auth.Authorization!.replace('Bearer ', ''));
    expect(all).not.toContain('secret-task-name-123');
  });
});
