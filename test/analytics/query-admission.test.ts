import { beforeAll, describe, expect, it } from 'vitest';
import {
  CHEAP_QUERY,
  HEAVY_QUERY,
  loadFacts,
  metricValue,
  untilQueued,
} from '../support/analytics-load.ts';
import { useCairn } from '../support/cairn.ts';
import { type HttpResult, http } from '../support/http.ts';

describe('fair admission of analytics queries over HTTP', () => {
  const cairn = useCairn({
    env: {
      CAIRN_QUERY_CONCURRENCY_PER_PRINCIPAL: '1',
      CAIRN_QUERY_QUEUE_PER_PRINCIPAL: '3',
      // Generous: this test is about order and refusal, not about the wait bound.
      CAIRN_QUERY_QUEUE_WAIT_MS: '600000',
      CAIRN_QUERY_TIMEOUT_MS: '600000',
    },
    scopes: ['analytics:read'],
    businesses: ['biz-0', 'biz-1', 'biz-2', 'biz-3'],
  });
  let otherTenant: Record<string, string>;
  beforeAll(async () => {
    await loadFacts(cairn.engines.clickhouse.client);
    otherTenant = await cairn.token({ scopes: ['analytics:read'], businesses: ['biz-1'] });
  }, 120_000);

  const query = (body: unknown, headers: Record<string, string>) =>
    http(cairn.url, 'POST', '/api/v1/query', {
      body,
      headers: { ...headers, 'Cache-Control': 'no-cache' },
    });

  it("answers another tenant's cheap query ahead of one tenant's heavy backlog, and refuses past the cap", async () => {
    // Embedded chDB has one slot. An operator's query holds it while the callers line up, so
    // the line is the same however fast or slow this machine is today.
    let release = () => {};
    const held = cairn.queryAdmission.run('operator', new AbortController().signal, () => {
      return new Promise<void>((resolve) => {
        release = resolve;
      });
    });

    const finished: string[] = [];
    const heavy: Array<Promise<HttpResult>> = [];
    for (let i = 0; i < 4; i++) {
      heavy.push(
        query(HEAVY_QUERY, cairn.auth).then((res) => {
          finished.push(`heavy ${res.status}`);
          return res;
        }),
      );
      // One arrival at a time, so the fourth is the one past the cap.
      await untilQueued(cairn.url, Math.min(i + 1, 3));
    }
    const refused = await heavy[3];
    expect(refused?.status).toBe(429);
    expect(refused?.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused?.body).toMatchObject({ status: 429, queued: 3, max_queued: 3 });
    expect(refused?.body.detail).toMatch(/analytics queries running/);

    const cheap = query(CHEAP_QUERY, otherTenant).then((res) => {
      finished.push('cheap');
      return res;
    });
    await untilQueued(cairn.url, 4);
    release();
    await held;

    expect((await cheap).status).toBe(200);
    const answers = await Promise.all(heavy);
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 429]);
    // The heavy tenant's backlog put the other tenant behind one heavy query at most, not three
    // (the cheap answer, being small, may even reach the client before that one's).
    const heavyBeforeCheap = finished.slice(0, finished.indexOf('cheap'));
    expect(heavyBeforeCheap.filter((entry) => entry === 'heavy 200').length).toBeLessThanOrEqual(1);
    expect(finished.slice(-2)).toEqual(['heavy 200', 'heavy 200']);
    expect(await metricValue(cairn.url, 'cairn_query_admission_queued')).toBe(0);
    expect(await metricValue(cairn.url, 'cairn_query_admission_rejections_total')).toBe(1);
  }, 300_000);

  it('admits at once when nothing else runs', async () => {
    const res = await query(HEAVY_QUERY, cairn.auth);
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeGreaterThan(0);
  }, 120_000);
});
