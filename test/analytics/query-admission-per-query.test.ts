import { beforeAll, describe, expect, it } from 'vitest';
import { CHEAP_QUERY, loadFacts, metricValue, untilQueued } from '../support/analytics-load.ts';
import { useCairn } from '../support/cairn.ts';
import { type HttpResult, http } from '../support/http.ts';

/**
 * Blocked tasks replay every task's history on facts: on these facts each of its statements runs
 * far past the small budget below, so each is cut by the budget, as on a large business with
 * the default budget.
 */
const FACTS = 400_000;
const HEAVY = {
  metrics: ['blocked_tasks', 'open_tasks', 'completion_rate'],
  dimensions: ['week'],
  period: 'last_90_days',
  timezone: 'Asia/Tokyo',
  // An assignee filter off UTC: no rollup keeps assignees by quarter hour, so the state is
  // replayed from facts, which the budget cannot finish.
  filters: [{ dimension: 'assignee', op: 'not_in', values: ['nobody'] }],
};
/** The time budget and the wait bound equal, as the defaults once were. */
const BUDGET_MS = 600;

describe('one admission and one time budget per analytics query (embedded chDB)', () => {
  const cairn = useCairn({
    env: {
      CAIRN_QUERY_TIMEOUT_MS: String(BUDGET_MS),
      CAIRN_QUERY_QUEUE_WAIT_MS: String(BUDGET_MS),
      CAIRN_QUERY_CONCURRENCY_PER_PRINCIPAL: '3',
    },
    scopes: ['analytics:read'],
    businesses: ['biz-0', 'biz-1', 'biz-2', 'biz-3'],
  });
  let otherTenant: Record<string, string>;
  beforeAll(async () => {
    await loadFacts(cairn.engines.clickhouse.client, FACTS);
    otherTenant = await cairn.token({ scopes: ['analytics:read'], businesses: ['biz-1'] });
  }, 180_000);

  /** Refusals so far; the counter has no sample before the first. */
  const rejections = () =>
    metricValue(cairn.url, 'cairn_query_admission_rejections_total').catch(() => 0);

  const query = (body: unknown, headers: Record<string, string>) =>
    http(cairn.url, 'POST', '/api/v1/query', {
      body,
      headers: { ...headers, 'Cache-Control': 'no-cache' },
    });

  it('answers a query whose rows spend the budget, with its totals and comparison, flagged partial', async () => {
    // Each statement used to queue for the engine on its own: the totals waited for the rows
    // and were refused 503 "busy" on an idle server, throwing the rows away.
    for (const extra of [{ include: ['totals'] }, { compare: 'previous_period' }]) {
      const res = await query({ ...HEAVY, ...extra }, cairn.auth);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.length).toBeGreaterThan(0);
      expect(res.body.warnings).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ code: 'partial_result', timeout_ms: BUDGET_MS }),
        ]),
      );
      // What the budget did not reach is null and named, never 0 (every row used to read 0,
      // and the totals {}).
      const partial = res.body.warnings.find(
        (warning: { code: string }) => warning.code === 'partial_result',
      );
      expect(partial.metrics).toEqual(HEAVY.metrics);
      const values = (row: Record<string, unknown>) => HEAVY.metrics.map((name) => row[name]);
      if (res.body.metadata.rows_read === 0) {
        for (const row of res.body.data) expect(values(row)).toEqual([null, null, null]);
      }
      if ('include' in extra) {
        expect(partial.totals).toBe(true);
        expect(Object.keys(res.body.metadata.totals).sort()).toEqual([...HEAVY.metrics].sort());
        expect(values(res.body.metadata.totals)).not.toContain(0);
      }
      if ('compare' in extra && res.body.metadata.rows_read === 0) {
        for (const row of res.body.data) expect(values(row.comparison)).toEqual([null, null, null]);
      }
      if ('compare' in extra) expect(res.body.metadata.comparison).toBeTypeOf('object');
    }
    expect(await rejections()).toBe(0);
  }, 120_000);

  it("answers another tenant's cheap queries while one tenant keeps heavy queries in flight", async () => {
    const heavy: Array<Promise<HttpResult>> = [];
    for (let i = 0; i < 3; i++) {
      heavy.push(query({ ...HEAVY, include: ['totals'], compare: 'previous_period' }, cairn.auth));
    }
    await untilQueued(cairn.url, 1);
    // Each cheap query waits behind one running statement at most, never long enough to be
    // refused: it used to wait behind a whole statement-plus-companion slot as long as the
    // wait bound, and got 503.
    for (let i = 0; i < 3; i++) {
      const cheap = await query(CHEAP_QUERY, otherTenant);
      expect(cheap.status, JSON.stringify(cheap.body)).toBe(200);
    }
    const answers = await Promise.all(heavy);
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200]);
    expect(await rejections()).toBe(0);
  }, 120_000);
});
