import { describe, expect, it } from 'vitest';
import { advanceWatermark } from '../../libs/projection/watermark.ts';
import { metricValue } from '../support/analytics-load.ts';
import { useCairn } from '../support/cairn.ts';
import { USE_SERVERS, waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';

const BY_PROJECT = { metrics: ['tasks_created'], dimensions: ['project'], period: 'last_7_days' };

describe('analytics result cache over HTTP', () => {
  const cairn = useCairn({ scopes: ['analytics:read', 'workflows:write'] });

  const query = (body: unknown, headers: Record<string, string> = {}) =>
    http(cairn.url, 'POST', '/api/v1/query', { body, headers: { ...cairn.auth, ...headers } });
  const createTasks = async (count: number) => {
    for (let i = 0; i < count; i++) {
      const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
        body: { business: 'acme', name: `t${i}`, project: 'alpha' },
        headers: cairn.auth,
      });
      expect(res.status).toBe(201);
    }
  };
  /**
   * Waits until the engine itself counts `n` tasks, asking a statement of its own (the cache
   * bypassed) so BY_PROJECT's entries are left as they were.
   */
  const untilProjected = (n: number) =>
    waitFor(async () => {
      const res = await query({ metrics: ['tasks_created'] }, { 'Cache-Control': 'no-cache' });
      if (res.body.data[0]?.tasks_created !== n) return undefined;
      // And the batch is committed, so the watermark holds still for the assertions that follow.
      const checkpoint = await cairn.db
        .selectFrom('projector_checkpoints')
        .select('pending_id')
        .where('name', '=', 'facts')
        .executeTakeFirst();
      return checkpoint?.pending_id === null || undefined;
    });

  it(`uses the ${USE_SERVERS ? 'Redis' : 'in-process'} store and reports it ready`, async () => {
    expect((await http(cairn.url, 'GET', '/readyz')).body.checks).toMatchObject({
      query_cache: 'ok',
    });
  });

  it('answers a repeated query from the cache: miss, then hit with the same data', async () => {
    await createTasks(3);
    await untilProjected(3);
    const hitsBefore = await metricValue(cairn.url, 'cairn_query_cache_hits_total');
    const first = await query(BY_PROJECT);
    const second = await query(BY_PROJECT);
    expect(first.status).toBe(200);
    expect(first.body.metadata.cache).toBe('miss');
    expect(second.body.metadata.cache).toBe('hit');
    expect(second.body.data).toEqual([{ project: 'alpha', tasks_created: 3 }]);
    expect(second.body.data).toEqual(first.body.data);
    expect(second.body.metadata.columns).toEqual(first.body.metadata.columns);
    // Nothing was read to give the cached answer.
    expect(second.body.metadata.rows_read).toBe(0);
    expect(await metricValue(cairn.url, 'cairn_query_cache_hits_total')).toBe(hitsBefore + 1);
  });

  it('bypasses the cache for Cache-Control: no-cache', async () => {
    expect((await query(BY_PROJECT)).body.metadata.cache).toBe('hit');
    const misses = await metricValue(cairn.url, 'cairn_query_cache_misses_total');
    for (const value of ['no-cache', 'max-age=0, no-cache', 'No-Cache']) {
      const fresh = await query(BY_PROJECT, { 'Cache-Control': value });
      expect(fresh.body.metadata.cache).toBe('miss');
      expect(fresh.body.metadata.rows_read).toBeGreaterThan(0);
    }
    expect(await metricValue(cairn.url, 'cairn_query_cache_misses_total')).toBe(misses + 3);
  });

  it('runs only its own statement for a no-cache repeat: where the next fact lies is known at that watermark', async () => {
    const statements = () => metricValue(cairn.url, 'cairn_analytics_engine_statements_total');
    const fresh = { 'Cache-Control': 'no-cache' };
    await query(BY_PROJECT, fresh);
    const before = await statements();
    const again = await query(BY_PROJECT, fresh);
    expect(again.body.metadata.cache).toBe('miss');
    expect(again.body.data).toEqual([{ project: 'alpha', tasks_created: 3 }]);
    // The row statement; its rows-read count and the horizon are known at this watermark.
    expect((await statements()) - before).toBe(1);
  });

  it('never answers stale: once new facts are projected, the cached answer is not served', async () => {
    expect((await query(BY_PROJECT)).body.metadata.cache).toBe('hit');
    await createTasks(2);
    // Until the projector has carried the new facts the cached answer is still the truth.
    await untilProjected(5);
    const after = await query(BY_PROJECT);
    expect(after.body.metadata.cache).toBe('miss');
    expect(after.body.data).toEqual([{ project: 'alpha', tasks_created: 5 }]);
    expect((await query(BY_PROJECT)).body.metadata.cache).toBe('hit');
  });

  it('misses after facts loaded straight into ClickHouse (the demo loader moves the watermark)', async () => {
    expect((await query(BY_PROJECT)).body.metadata.cache).toBe('hit');
    await advanceWatermark(cairn.db);
    expect((await query(BY_PROJECT)).body.metadata.cache).toBe('miss');
  });

  it('keys on the statement and its parameters: a different query is a miss', async () => {
    const daily = { ...BY_PROJECT, dimensions: ['day'] };
    expect((await query(daily)).body.metadata.cache).toBe('miss');
    const zone = { ...daily, timezone: 'Asia/Tokyo' };
    expect((await query(zone)).body.metadata.cache).toBe('miss');
    expect((await query(zone)).body.metadata.cache).toBe('hit');
  });

  it('serves refreshes of live periods from the cache: state at now, comparisons and totals', async () => {
    for (const period of ['today', 'last_7_days', 'this_month']) {
      const body = {
        metrics: ['open_tasks', 'tasks_created'],
        dimensions: ['assignee'],
        business: 'acme',
        period,
        compare: 'previous_period',
        include: ['totals'],
      };
      const first = await query(body);
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      // Refreshes as a dashboard sends them, some time apart, with no write in between.
      for (const pause of [0, 250, 500]) {
        await new Promise((resolve) => setTimeout(resolve, pause));
        const again = await query(body);
        expect(again.body.metadata.cache, period).toBe('hit');
        expect(again.body.data).toEqual(first.body.data);
        expect(again.body.metadata.totals).toEqual(first.body.metadata.totals);
        expect(again.body.metadata.rows_read).toBe(0);
      }
    }
  });
});
