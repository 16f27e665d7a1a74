// A kept answer is checked again only when facts of its own businesses arrived since it was
// kept: over random queries of one business, facts projected for another business leave the
// kept answer as it was and run no engine statement, at the same clock reading; facts of the
// business itself, dated inside the period, always change the answer, to the one computed
// afresh. Statements are counted by the engine itself (`system.events`), so those the service
// runs around its executor (where an all_time series starts) count too.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MetricName } from '../../libs/analytics/catalog/catalog.ts';
import type { ResultCache } from '../../libs/analytics/execute/result-cache.ts';
import { type AnalyticsDeps, prepareQuery } from '../../libs/analytics/query.service.ts';
import { type Engines, openEngines } from '../../libs/storage/engines.ts';
import { createTask } from '../../libs/tasks/task.service.ts';
import { inTaskUnit } from '../../libs/tasks/task-unit.ts';
import { projectAll } from '../support/analytics.ts';
import { simulate } from '../support/analytics-model.ts';
import { answered, clockedAnswers, queryRequests } from '../support/clocked-answers.ts';
import { type TestConfig, testConfig } from '../support/engines.ts';

const DAY = 86_400_000;
/** The simulated history: a month of facts in two businesses, read from its last day on. */
const START = Date.parse('2026-09-01T00:00:00Z');
const END = Date.parse('2026-10-03T06:00:00Z');
const RUNS = Number(process.env.ANSWER_REUSE_BUSINESSES_RUNS ?? 40);
const SEED = Number(process.env.ANSWER_REUSE_BUSINESSES_SEED ?? 20261129);

/** Every metric a created task moves, beside others it may not. */
const MOVED: MetricName = 'tasks_created';
const OTHERS: MetricName[] = [
  'tasks_completed',
  'open_tasks',
  'overdue_tasks',
  'blocked_tasks',
  'completion_rate',
  'p90_cycle_time_hours',
];
/** all_time first: a series of it starts where the business's first fact lies. */
const PERIODS = [
  'all_time',
  'today',
  'yesterday',
  'this_week',
  'last_7_days',
  'this_month',
  'last_30_days',
];

const request = queryRequests({
  metrics: [MOVED, ...OTHERS],
  dimensions: fc.constantFrom([], ['day'], ['week'], ['month'], ['project'], ['status', 'day']),
  periods: PERIODS,
  compares: [null, null, 'previous_period'],
});

describe('answer reuse per business: only facts of the businesses read reach a kept answer', () => {
  let setup: TestConfig;
  let engines: Engines;
  let own: string;
  let other: string;
  let deps: AnalyticsDeps;
  let cache: ResultCache;
  let ask: Awaited<ReturnType<typeof clockedAnswers>>['ask'];

  beforeAll(async () => {
    setup = await testConfig();
    engines = await openEngines(setup.config);
    const history = await simulate(engines, 23, { start: START, now: END, events: 160 });
    [own, other] = history.businesses as [string, string];
    await projectAll(engines);
    ({ deps, cache, ask } = await clockedAnswers(setup, engines, () => [own], { start: END }));
  }, 300_000);
  afterAll(async () => {
    await cache?.close();
    await engines?.close();
    await setup?.cleanup();
  });

  /** SELECT statements the engine has run; reading it is one more. */
  const selects = async () => {
    const result = await engines.clickhouse.client.query({
      query: "SELECT value FROM system.events WHERE event = 'SelectQuery'",
      format: 'JSONEachRow',
    });
    const [row] = await result.json<{ value: number | string }>();
    return Number(row?.value ?? 0);
  };

  /** Tasks created in `business`, dated `at`, then projected with everything before them. */
  async function created(business: string, instants: number[]): Promise<void> {
    for (const at of instants) {
      await inTaskUnit({ db: engines.postgres.db, wakeProjector: () => {} }, (trx) =>
        createTask(trx, { business, name: 'written' }, new Date(at)),
      );
    }
    await projectAll(engines);
  }

  it('keeps the answer and runs nothing when only another business had new facts', async () => {
    await fc.assert(
      fc.asyncProperty(
        request,
        fc.integer({ min: END - DAY, max: END + DAY }),
        fc.boolean(),
        fc.array(fc.integer({ min: START - 30 * DAY, max: END + 2 * DAY }), {
          minLength: 1,
          maxLength: 3,
        }),
        async (query, at, known, instants) => {
          const kept = await ask(query, at);
          // A business the query's reader has never seen, or one it may not read.
          await created(known ? other : `${own}_next_door`, instants);
          const before = await selects();
          const again = await ask(query, at);
          const ran = (await selects()) - before - 1;
          const context = `${JSON.stringify(query)} at ${at}, facts at ${instants}`;
          expect(ran, context).toBe(0);
          expect(again.metadata.cache, context).toBe('hit');
          expect(answered(again), context).toEqual(answered(kept));
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
  }, 900_000);

  it('changes the answer, as computed afresh, when the business read had new facts in its period', async () => {
    await fc.assert(
      fc.asyncProperty(
        request.map((query) => ({
          ...query,
          metrics: [MOVED, ...query.metrics.filter((metric) => metric !== MOVED)].slice(0, 3),
        })),
        fc.integer({ min: END - DAY, max: END + DAY }),
        fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
        async (query, at, share) => {
          const { period } = await prepareQuery(deps, query, [own], new Date(at));
          // Dated inside the period and before the reading, where every answer counts it.
          const from = Math.max(period.from.getTime(), START);
          const to = Math.min(period.to.getTime(), at);
          fc.pre(to - from > 1);
          const kept = await ask(query, at);
          await created(own, [from + Math.floor(share * (to - from - 1))]);
          const before = await selects();
          const again = await ask(query, at);
          const ran = (await selects()) - before - 1;
          const fresh = await ask(query, at, { fresh: true });
          const context = `${JSON.stringify(query)} at ${at}`;
          expect(ran, context).toBeGreaterThan(0);
          expect(again.metadata.cache, context).not.toBe('hit');
          expect(answered(again), context).toEqual(answered(fresh));
          expect(again.data, context).not.toEqual(kept.data);
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
  }, 900_000);
});
