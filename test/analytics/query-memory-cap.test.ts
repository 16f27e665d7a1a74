import { beforeAll, describe, expect, it } from 'vitest';
import { CHEAP_QUERY, HEAVY_QUERY, loadFacts } from '../support/analytics-load.ts';
import { useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';

const CAP = 8 * 1_048_576;

describe('per-query memory cap', () => {
  const cairn = useCairn({
    env: { CAIRN_QUERY_MAX_MEMORY_BYTES: String(CAP) },
    scopes: ['analytics:read'],
    businesses: ['biz-1'],
  });
  beforeAll(() => loadFacts(cairn.engines.clickhouse.client), 300_000);

  const query = (body: unknown) =>
    http(cairn.url, 'POST', '/api/v1/query', {
      body,
      headers: { ...cairn.auth, 'Cache-Control': 'no-cache' },
    });

  it('answers a query over the cap with a 422 problem that says so, and keeps serving', async () => {
    const baseline = await query(CHEAP_QUERY);
    expect(baseline.status).toBe(200);

    const over = await query({ ...HEAVY_QUERY, business: 'biz-1' });
    expect(over.status).toBe(422);
    expect(over.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(over.body).toMatchObject({
      type: 'urn:cairn:problem:memory-limit-exceeded',
      title: 'Memory Limit Exceeded',
      status: 422,
      max_memory_bytes: CAP,
    });
    expect(over.body.detail).toMatch(/more than the 8 MiB of memory one query may use/);
    expect(over.text).not.toMatch(/SELECT|DB::Exception|MEMORY_LIMIT/);

    // The process lives on, and the engine's next answers are whole and correct.
    expect((await http(cairn.url, 'GET', '/healthz')).status).toBe(200);
    const after = await query(CHEAP_QUERY);
    expect(after.status).toBe(200);
    expect(after.body.data).toEqual(baseline.body.data);
    const again = await query({ ...HEAVY_QUERY, business: 'biz-1' });
    expect(again.status).toBe(422);
  }, 120_000);

  it('sets the cap on the statement ClickHouse runs', async () => {
    const seen = await cairn.engines.clickhouse.client.query({
      query: "SELECT getSetting('max_memory_usage') AS cap",
      format: 'JSONEachRow',
    });
    // Outside analytics queries the neutral value applies (chDB keeps settings per session).
    expect(await seen.json()).toEqual([{ cap: 0 }]);
  });
});
