import { describe, expect, it } from 'vitest';
import { ROLLUP_NAMES } from '../../libs/analytics/sources/rollups.ts';
import { createLogger } from '../../libs/observability/logger.ts';
import { useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';
import { parseMetrics, promtoolCheck, type Sample, sampleValue } from '../support/prometheus.ts';

describe('GET /metrics and request logs after real traffic', () => {
  const logLines: string[] = [];
  const cairn = useCairn({
    // One row per answer, so a two-business query is truncated: a warning to count.
    env: { CAIRN_QUERY_MAX_ROWS: '1' },
    logger: createLogger('info', {
      write: (line: string) => {
        logLines.push(line);
      },
    }),
    businesses: ['m_one', 'm_two'],
  });

  let samples: Sample[];
  let text: string;
  const gids: string[] = [];

  it('serves Prometheus text with every family after tasks, queries and errors', async () => {
    for (const business of ['m_one', 'm_two', 'm_two']) {
      const created = await http(cairn.url, 'POST', '/api/v1/tasks', {
        body: { business, name: 'secret-task-name-123' },
        headers: cairn.auth,
      });
      expect(created.status).toBe(201);
      gids.push(created.body.data.gid);
    }
    for (const gid of gids) {
      expect(
        (await http(cairn.url, 'GET', `/api/v1/tasks/${gid}`, { headers: cairn.auth })).status,
      ).toBe(200);
    }
    expect((await http(cairn.url, 'GET', '/no/such/place/42')).status).toBe(404);
    expect((await http(cairn.url, 'GET', `/api/v1/tasks/${gids[0]}`)).status).toBe(401);
    const query = { metrics: ['tasks_created'], dimensions: ['business'], period: 'today' };
    await waitFor(async () => {
      const res = await http(cairn.url, 'POST', '/api/v1/query', {
        body: query,
        headers: cairn.auth,
      });
      return res.body?.metadata?.total_rows === 2;
    });
    // Asked again with nothing new projected: answered from the cache, and labelled so.
    await waitFor(async () => {
      const res = await http(cairn.url, 'POST', '/api/v1/query', {
        body: query,
        headers: cairn.auth,
      });
      return res.body?.metadata?.cache === 'hit';
    });

    // Both businesses answering does not mean all three facts are in: wait for the third.
    const scrape = await waitFor(async () => {
      const res = await http(cairn.url, 'GET', '/metrics');
      const projected = sampleValue(
        parseMetrics(res.text),
        'cairn_projector_facts_projected_total',
      );
      return projected >= 3 && res;
    });
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
    // Labelled by what answered: a table (never a raw value) and the cache result.
    const answered = samples.filter(
      (s) => s.name === 'cairn_analytics_query_duration_seconds_count' && s.value > 0,
    );
    expect(answered.some((s) => s.labels.cache === 'miss' && s.labels.source !== 'none')).toBe(
      true,
    );
    expect(answered.some((s) => s.labels.cache === 'hit')).toBe(true);
    for (const { labels } of answered) {
      expect(['facts', 'none', ...ROLLUP_NAMES]).toContain(labels.source);
      expect(['hit', 'miss', 'coalesced', 'none']).toContain(labels.cache);
    }
    // A fresh installation's rollups hold every fact; nothing needed filling.
    for (const rollup of ROLLUP_NAMES) {
      expect(sampleValue(samples, 'cairn_rollups_complete', { rollup })).toBe(1);
    }
    expect(sampleValue(samples, 'cairn_rollup_fill_facts_total')).toBe(0);
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

  it('passes `promtool check metrics`', () => {
    expect(samples.length).toBeGreaterThan(50);
    expect(promtoolCheck(text)).toBe('');
  });

  it('writes one JSON log line per request, without tokens or bodies', async () => {
    const requests = logLines.map((line) => JSON.parse(line)).filter((e) => e.msg === 'request');
    const fetched = await http(cairn.url, 'GET', `/api/v1/tasks/${gids[0]}`, {
      headers: cairn.auth,
    });
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
    expect(all).not.toContain(cairn.auth.Authorization!.replace('Bearer ', ''));
    expect(all).not.toContain('secret-task-name-123');
  });
});

describe('route labels of requests refused before routing', () => {
  const cairn = useCairn({ rateLimits: { anonymous: 1 } });

  it('names what was asked for (/docs, /openapi.json, an asset), not "unmatched"', async () => {
    expect((await http(cairn.url, 'GET', '/openapi.json')).status).toBe(200);
    for (const path of ['/openapi.json', '/nowhere'])
      expect((await http(cairn.url, 'GET', path)).status, path).toBe(429);
    // Pages and their assets are not charged, so they are answered; their labels still count.
    const page = await http(cairn.url, 'GET', '/docs');
    const asset = /href="(\/docs\/assets\/[^"]+\.css)"/.exec(page.text)?.[1];
    expect(asset).toBeDefined();
    expect((await http(cairn.url, 'GET', asset!)).status).toBe(200);
    expect((await http(cairn.url, 'HEAD', '/docs')).status).toBe(200);

    const scrape = await http(cairn.url, 'GET', '/metrics');
    const samples = parseMetrics(scrape.text);
    const count = (route: string, status: string, method = 'GET') =>
      sampleValue(samples, 'http_request_duration_seconds_count', { method, route, status });
    expect(count('/openapi.json', '429')).toBe(1);
    expect(count('/docs', '200')).toBe(1);
    expect(count('/docs', '200', 'HEAD')).toBe(1);
    expect(count('/docs/assets/:bundle/:file', '200')).toBe(1);
    expect(count('unmatched', '429')).toBe(1);
    expect(scrape.text).not.toContain(asset!);
    expect(promtoolCheck(scrape.text)).toBe('');
  });
});
