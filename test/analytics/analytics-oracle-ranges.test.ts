// Oracle for the query language around the metrics: date ranges, hours, zero-filled series,
// comparisons, totals and offset paging, each checked against the independent computation in
// test/support/analytics-model.ts over seeded histories that span more than a year.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DimensionName,
  METRIC_NAMES,
  type MetricName,
} from '../../libs/analytics/catalog/catalog.ts';
import type { QueryRequest } from '../../libs/analytics/parse/query-parser.ts';
import {
  type AnalyticsDeps,
  prepareQuery,
  type QueryResponse,
  runQuery,
} from '../../libs/analytics/query.service.ts';
import { type Engines, openEngines } from '../../libs/storage/engines.ts';
import { analyticsDeps, projectAll } from '../support/analytics.ts';
import {
  expected,
  expectRows,
  expectValues,
  type History,
  isTime,
  localMidnight,
  type ModelPeriod,
  modelBuckets,
  prng,
  type Row,
  simulate,
  withComparison,
} from '../support/analytics-model.ts';
import { type TestConfig, testConfig } from '../support/engines.ts';

// Paris leaves summer time on 2026-10-25, New York on 2026-11-01 (01:00 happens twice).
const NOW = new Date('2026-11-02T12:00:00Z');
const START = Date.parse('2025-09-25T00:00:00Z');
const SEEDS = [3, 11, 29];
const ALL = METRIC_NAMES;
const FLOWS: MetricName[] = [
  'tasks_created',
  'tasks_completed',
  'completion_rate',
  'p85_cycle_time_hours',
  'p90_cycle_time_hours',
  'p95_cycle_time_hours',
  'avg_work_time_hours',
  'p85_work_time_hours',
  'avg_blocked_hours',
  'flow_efficiency',
];

/** Dense writes over New York's night of the clock change, and writes on the exact edges. */
function extraTimes(seed: number): number[] {
  const random = prng(seed * 31);
  const from = Date.parse('2026-10-31T20:00:00Z');
  const span = Date.parse('2026-11-01T12:00:00Z') - from;
  return [
    ...Array.from({ length: 40 }, () => from + Math.floor(random.next() * span)),
    Date.parse('2026-10-31T22:59:59.999Z'),
    Date.parse('2026-11-01T06:00:00Z'),
    Date.parse('2026-11-01T05:59:59.999Z'),
    Date.parse('2025-10-26T00:59:59.999Z'),
  ];
}

describe('analytics oracle: ranges, hours, series, comparisons, totals, paging', () => {
  let setup: TestConfig;
  let engines: Engines;
  let deps: AnalyticsDeps;
  const histories = new Map<number, History>();
  beforeAll(async () => {
    setup = await testConfig();
    engines = await openEngines(setup.config);
    deps = analyticsDeps(engines, { now: () => NOW });
    for (const seed of SEEDS) {
      const window = { start: START, now: NOW.getTime(), events: 140, extra: extraTimes(seed) };
      histories.set(seed, await simulate(engines, seed, window));
    }
    await projectAll(engines);
  }, 600_000);
  afterAll(async () => {
    await engines.close();
    await setup.cleanup();
  });

  /**
   * The planner's answer, after checking that every other source it finds exact (facts or a
   * rollup) gives the same rows, totals and comparison.
   */
  const ask = async (seed: number, request: QueryRequest) => {
    const { businesses } = histories.get(seed) as History;
    const { sources } = await prepareQuery(deps, request, businesses, NOW);
    const answers = [];
    for (const source of sources) {
      const signal = new AbortController().signal;
      answers.push(await runQuery(deps, request, { signal, businesses, source }));
    }
    const [first, ...others] = answers as [QueryResponse, ...QueryResponse[]];
    for (const [i, other] of others.entries()) {
      const context = `${sources[i + 1]} vs ${sources[0]} ${JSON.stringify(request)}`;
      expect(other.data.length, context).toBe(first.data.length);
      expectRows(other.data, first.data, context);
      const { totals, totals_comparison, comparison } = first.metadata;
      expectValues(other.metadata, { totals, totals_comparison, comparison }, context);
    }
    return first;
  };
  const factsOf = (seed: number) => (histories.get(seed) as History).facts;
  const midnight = (date: string, tz: string) => localMidnight(date, tz);

  it.each(SEEDS)(
    'seed %i: inclusive dates across DST changes, in every zone',
    async (seed) => {
      const facts = factsOf(seed);
      for (const tz of ['Europe/Paris', 'America/New_York', 'Asia/Kathmandu']) {
        const period: ModelPeriod = {
          from: midnight('2026-10-20', tz),
          to: midnight('2026-11-02', tz),
          tz,
        };
        for (const dims of [[], ['day'], ['project', 'week']] as DimensionName[][]) {
          const answer = await ask(seed, {
            metrics: ALL,
            dimensions: dims,
            date_range: ['2026-10-20', '2026-11-01'],
            timezone: tz,
          });
          expect(answer.metadata.query).toMatchObject({
            period: {
              name: 'custom',
              from: new Date(period.from).toISOString(),
              to: new Date(period.to).toISOString(),
            },
          });
          expectRows(
            answer.data,
            expected(facts, ALL, dims, period, NOW.getTime()),
            `${tz} ${dims.join('+')}`,
          );
        }
      }
    },
    600_000,
  );

  it.each(SEEDS)(
    'seed %i: half-open date-times, by hour in whole, 30- and 45-minute zones',
    async (seed) => {
      const facts = factsOf(seed);
      const range: [string, string] = ['2026-10-31T22:59:59.999Z', '2026-11-01T06:00:00Z'];
      const period = (tz: string): ModelPeriod => ({
        from: Date.parse(range[0]),
        to: Date.parse(range[1]),
        tz,
      });
      const plain = await ask(seed, { metrics: FLOWS, date_range: range });
      expectRows(
        plain.data,
        expected(facts, FLOWS, [], period('UTC'), NOW.getTime()),
        'date-times',
      );
      // Both edges hold a write: the first counts, the last does not.
      expect(facts.some((f) => f.at === Date.parse(range[1]))).toBe(true);
      for (const tz of ['America/New_York', 'Asia/Kolkata', 'Asia/Kathmandu', 'Australia/Eucla']) {
        for (const dims of [['hour'], ['hour', 'assignee']] as DimensionName[][]) {
          const wide: [string, string] = ['2026-10-31T20:15:00-04:00', '2026-11-01T12:00:00Z'];
          const answer = await ask(seed, {
            metrics: ALL,
            dimensions: dims,
            date_range: wide,
            timezone: tz,
          });
          const bounds = { from: Date.parse(wide[0]), to: Date.parse(wide[1]), tz };
          expectRows(
            answer.data,
            expected(facts, ALL, dims, bounds, NOW.getTime()),
            `${tz} ${dims}`,
          );
        }
      }
      // New York's 01:00 happens twice on 2026-11-01; both hours are rows of their own.
      const ny = await ask(seed, {
        metrics: ['tasks_created'],
        dimensions: ['hour'],
        date_range: ['2026-11-01', '2026-11-01'],
        timezone: 'America/New_York',
      });
      expect(ny.data.map((row) => row.hour)).toContain('2026-11-01T01:00:00-04:00');
      expect(ny.data.map((row) => row.hour)).toContain('2026-11-01T01:00:00-05:00');
      expect(ny.data).toHaveLength(25);
    },
    600_000,
  );

  it.each(SEEDS)(
    'seed %i: series are zero-filled, future buckets included',
    async (seed) => {
      const facts = factsOf(seed);
      const tz = 'America/New_York';
      const period: ModelPeriod = {
        from: midnight('2026-11-01', tz),
        to: midnight('2026-12-01', tz),
        tz,
      };
      for (const [dimension, count] of [
        ['day', 30],
        // 2026-11-01 is a Sunday: the first week is named by Monday 2026-10-26.
        ['week', 6],
      ] as const) {
        const answer = await ask(seed, {
          metrics: ALL,
          dimensions: [dimension],
          period: 'this_month',
          timezone: tz,
        });
        expect(answer.data, dimension).toHaveLength(count);
        expect(answer.metadata.total_rows).toBe(count);
        expectRows(
          answer.data,
          expected(facts, ALL, [dimension], period, NOW.getTime()),
          dimension,
        );
        // Today (2026-11-02 in New York) is the first bucket not yet complete.
        const today = modelBuckets(dimension, period, facts).find((b) => b.end > NOW.getTime());
        expect(answer.metadata.incomplete_from).toBe(new Date(today?.start ?? 0).toISOString());
        expect(answer.data.at(-1)).toMatchObject({
          tasks_created: 0,
          completion_rate: null,
          open_tasks: null,
        });
      }
      const past = await ask(seed, {
        metrics: ['tasks_created'],
        dimensions: ['day'],
        period: 'last_month',
      });
      expect(past.metadata.incomplete_from).toBeNull();
    },
    600_000,
  );

  it.each(SEEDS)(
    'seed %i: comparisons, a running period cut at the same elapsed offset',
    async (seed) => {
      const facts = factsOf(seed);
      const tz = ['UTC', 'Europe/Paris', 'America/New_York'][SEEDS.indexOf(seed)] as string;
      const cases: Array<{
        request: Omit<QueryRequest, 'metrics'>;
        current: ModelPeriod;
        other: ModelPeriod;
        cut: boolean;
      }> = [];
      const thisMonth = { from: midnight('2026-11-01', tz), to: midnight('2026-12-01', tz), tz };
      const october = { from: midnight('2026-10-01', tz), to: midnight('2026-11-01', tz), tz };
      cases.push({
        request: { period: 'this_month', compare: 'previous_period' },
        current: thisMonth,
        other: october,
        cut: true,
      });
      cases.push({
        request: { period: 'last_month', compare: 'previous_year' },
        current: october,
        other: { from: midnight('2025-10-01', tz), to: midnight('2025-11-01', tz), tz },
        cut: false,
      });
      cases.push({
        request: { date_range: ['2026-10-20', '2026-11-01'], compare: 'previous_period' },
        current: { from: midnight('2026-10-20', tz), to: midnight('2026-11-02', tz), tz },
        other: { from: midnight('2026-10-07', tz), to: midnight('2026-10-20', tz), tz },
        cut: false,
      });
      for (const { request, current, other, cut } of cases) {
        const until = cut ? other.from + (NOW.getTime() - current.from) : other.to;
        for (const dims of [['day'], ['project'], ['week', 'status']] as DimensionName[][]) {
          const context = `${JSON.stringify(request)} ${dims}`;
          const answer = await ask(seed, {
            ...request,
            metrics: ALL,
            dimensions: dims,
            timezone: tz,
            include: ['totals'],
          });
          expect(answer.metadata.comparison, context).toEqual({
            period: { from: new Date(other.from).toISOString(), to: new Date(until).toISOString() },
            cut_at_elapsed: cut,
          });
          const counted = { ...other, to: until };
          const time = dims.find(isTime);
          const wanted = withComparison(
            expected(facts, ALL, dims, current, NOW.getTime()),
            expected(facts, ALL, dims, counted, until),
            dims,
            ALL,
            {
              current: modelBuckets(time, current, facts),
              other: modelBuckets(time, other, facts),
            },
          );
          expectRows(answer.data, wanted, context);
          const [totals] = expected(facts, ALL, [], current, NOW.getTime());
          const [totalsComparison] = expected(facts, ALL, [], counted, until);
          expectValues(answer.metadata.totals as Row, totals as Row, `${context} totals`);
          expectValues(
            answer.metadata.totals_comparison as Row,
            totalsComparison as Row,
            `${context} totals_comparison`,
          );
        }
      }
    },
    600_000,
  );

  it.each(SEEDS)(
    'seed %i: totals are computed over the whole period, not summed',
    async (seed) => {
      const facts = factsOf(seed);
      const tz = 'Europe/Paris';
      const period = { from: midnight('2026-08-01', tz), to: midnight('2026-11-02', tz), tz };
      const filters = [{ dimension: 'project' as const, op: 'neq' as const, values: ['beta'] }];
      const answer = await ask(seed, {
        metrics: ALL,
        dimensions: ['assignee', 'week'],
        date_range: ['2026-08-01', '2026-11-01'],
        timezone: tz,
        filters,
        include: ['totals'],
      });
      const rows = expected(facts, ALL, ['assignee', 'week'], period, NOW.getTime(), filters);
      expectRows(answer.data, rows, 'rows');
      const [totals] = expected(facts, ALL, [], period, NOW.getTime(), filters);
      expectValues(answer.metadata.totals as Row, totals as Row, 'totals');
    },
    600_000,
  );

  it.each(SEEDS)(
    'seed %i: offset pages through a stable order',
    async (seed) => {
      const request: QueryRequest = {
        metrics: ['tasks_created', 'open_tasks', 'avg_cycle_time_hours'],
        dimensions: ['assignee', 'week'],
        period: 'last_90_days',
        order_by: [{ field: 'tasks_created', direction: 'desc' }],
      };
      const whole = await ask(seed, request);
      const pages: Row[] = [];
      for (let offset = 0; offset < whole.data.length + 4; offset += 4) {
        const page = await ask(seed, { ...request, limit: 4, offset });
        expect(page.metadata.total_rows).toBe(whole.data.length);
        expect(page.warnings).toBeUndefined();
        pages.push(...page.data);
      }
      expect(pages).toEqual(whole.data);
      const tz = 'UTC';
      const period = { from: midnight('2026-08-05', tz), to: midnight('2026-11-03', tz), tz };
      expectRows(
        whole.data,
        expected(factsOf(seed), request.metrics, ['assignee', 'week'], period, NOW.getTime()),
        'whole',
      );
      // A series pages the same way through its zero-filled buckets.
      const series = {
        metrics: ['tasks_created' as const],
        dimensions: ['day' as const],
        period: 'last_30_days' as const,
      };
      const all = await ask(seed, series);
      const second = await ask(seed, { ...series, limit: 7, offset: 7 });
      expect(second.data).toEqual(all.data.slice(7, 14));
      expect(second.metadata.total_rows).toBe(30);
    },
    600_000,
  );
});
