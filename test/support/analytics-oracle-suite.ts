// The analytics oracle: seeded random task histories go through the write side and the
// projector; every metric × dimension × period from ClickHouse must equal an independent
// TypeScript computation (analytics-model.ts). Used by analytics-oracle*.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DIMENSION_NAMES,
  type DimensionName,
  METRIC_NAMES,
  METRICS,
  type MetricName,
} from '../../libs/analytics/catalog/catalog.ts';
import type { QueryFilter } from '../../libs/analytics/parse/query-parser.ts';
import { PERIODS, resolvePeriod } from '../../libs/analytics/period/period.ts';
import { type AnalyticsDeps, prepareQuery, runQuery } from '../../libs/analytics/query.service.ts';
import { countUnprojected, loadCheckpoint } from '../../libs/projection/outbox-reader.ts';
import { drainOutbox, FACTS_CHECKPOINT } from '../../libs/projection/projector.ts';
import { type Engines, openEngines } from '../../libs/storage/engines.ts';
import { analyticsDeps } from './analytics.ts';
import { expected, expectRows, type ModelFact, type Row, simulate } from './analytics-model.ts';
import { type TestConfig, testConfig, waitFor } from './engines.ts';

// After Paris (10-25) and New York (11-01) leave summer time: periods straddle both changes.
const NOW = new Date('2026-11-02T12:00:00Z');
const START = Date.parse('2026-09-20T00:00:00Z');
// Land some writes right around the DST changes and local midnights.
const EXTRA = [
  '2026-10-25T00:59:59.999Z',
  '2026-10-25T01:00:00Z',
  '2026-11-01T05:30:00Z',
  '2026-11-01T06:00:00Z',
  '2026-10-31T23:00:00Z',
  '2026-10-31T22:59:59.999Z',
].map(Date.parse);

const DIMENSION_SETS: DimensionName[][] = [
  [],
  // Hours are checked by the date-range oracle, over shorter periods.
  ...DIMENSION_NAMES.filter((d) => d !== 'hour').map((d) => [d]),
  ['project', 'day'],
  ['status', 'assignee', 'week'],
];
const FLOW = METRIC_NAMES.filter((m) => METRICS[m].source === 'flow');
const OPEN_COUNTS: MetricName[] = ['open_tasks', 'overdue_tasks'];
const STATE = METRIC_NAMES.filter((m) => METRICS[m].source === 'state');
/** Tasks in every status from summed changes, beside the open counts summed from the same. */
const IN_STATUS: MetricName[] = ['tasks_in_status', ...OPEN_COUNTS];
/** Every metric every rollup carries: queries the planner can send to any rollup. */
const ROLLUP_FLOW = METRIC_NAMES.filter(
  (m) => METRICS[m].sql.rollup !== null && METRICS[m].needs.every((need) => need === 'due_dates'),
);
/** Blocked tasks from the blocked changes the write side records, beside the open count. */
const BLOCKED: MetricName[] = ['blocked_tasks', 'open_tasks'];

/** One seed's history, checked period by period so each test stays well inside its time limit. */
function oracleSuite(seed: number, tz: string) {
  describe(`seed ${seed} in ${tz}`, () => {
    let facts: ModelFact[];
    let businesses: string[];
    beforeAll(async () => {
      ({ facts, businesses } = await simulate(engines, seed, {
        start: START,
        now: NOW.getTime(),
        extra: EXTRA,
      }));
      // The history exercises every kind of fact, or the comparison would prove little.
      expect(new Set(facts.map((f) => f.kind))).toEqual(
        new Set([
          'task_created',
          'task_updated',
          'task_completed',
          'task_deleted',
          'dependency_added',
          'dependency_removed',
        ]),
      );
      for (const f of facts.filter((fact) => fact.kind === 'task_completed')) {
        completionKinds.add(f.startedAt === null ? 'never started' : 'started');
        completionKinds.add(f.blockedMs === 0 ? 'never blocked' : 'blocked');
      }
      // The projector only takes facts older than every running transaction on the server, and
      // other databases' transactions count too: drain until every fact of the outbox is in.
      await waitFor(
        async () => {
          await drainOutbox({
            db: engines.postgres.db,
            clickhouse: engines.clickhouse.client,
            batchSize: 500,
          });
          const { cursor } = await loadCheckpoint(engines.postgres.db, FACTS_CHECKPOINT);
          return (await countUnprojected(engines.postgres.db, cursor)) === 0;
        },
        { timeoutMs: 120_000, intervalMs: 200 },
      );
    }, 300_000);
    /** Runs the query on every source the planner finds exact; each answer must match. */
    const check = async (
      metrics: MetricName[],
      dims: DimensionName[],
      period: (typeof PERIODS)[number],
      filters: QueryFilter[] = [],
    ) => {
      const request = { metrics, dimensions: dims, period, timezone: tz, filters };
      const { sources } = await prepareQuery(deps, request, businesses, NOW);
      const resolved = resolvePeriod(period, NOW, tz);
      const bounds = {
        from: resolved.from.getTime(),
        to: resolved.to.getTime(),
        tz,
        allTime: period === 'all_time',
      };
      const wanted = expected(facts, metrics, dims, bounds, NOW.getTime(), filters);
      for (const source of sources) {
        const answer = await runQuery(deps, request, {
          signal: new AbortController().signal,
          businesses,
          source,
        });
        expect(answer.metadata.source).toBe(source);
        answered.add(source);
        expectRows(
          answer.data as Row[],
          wanted,
          `${source} ${metrics.length}m ${dims.join('+')} ${period} ${JSON.stringify(filters)}`,
        );
      }
    };
    for (const period of PERIODS) {
      it(`${period}: every metric, and open and in-status counts by summed changes, by each dimension set`, {
        timeout: CASE_TIMEOUT,
      }, async () => {
        for (const dims of DIMENSION_SETS) await check(METRIC_NAMES, dims, period);
        // Without blocked_tasks, open and overdue counts come from summed changes of state
        // rather than per-task spans: both ways must agree with the oracle everywhere.
        for (const dims of DIMENSION_SETS) await check(OPEN_COUNTS, dims, period);
        for (const dims of DIMENSION_SETS) await check(IN_STATUS, dims, period);
      });
    }
    it('flows and states apart', { timeout: CASE_TIMEOUT }, async () => {
      for (const dims of DIMENSION_SETS) {
        await check(FLOW, dims, 'last_30_days');
        await check(STATE, dims, 'last_month');
        await check(ROLLUP_FLOW, dims, 'last_90_days');
        await check(BLOCKED, dims, 'last_90_days');
        await check(BLOCKED, dims, 'all_time');
      }
    });
    it('filters', { timeout: CASE_TIMEOUT }, async () => {
      await check(['tasks_created', ...OPEN_COUNTS], ['week'], 'last_90_days', [
        { dimension: 'project', op: 'not_in', values: ['alpha'] },
        { dimension: 'status', op: 'eq', values: ['open'] },
      ]);
      await check(METRIC_NAMES, ['day'], 'last_30_days', [
        { dimension: 'project', op: 'in', values: ['alpha', null] },
      ]);
      await check(METRIC_NAMES, ['status'], 'all_time', [
        { dimension: 'assignee', op: 'neq', values: ['bob'] },
      ]);
      await check(METRIC_NAMES, [], 'this_month', [
        { dimension: 'day', op: 'not_in', values: ['2026-11-01'] },
      ]);
      await check(METRIC_NAMES, ['assignee'], 'last_90_days', [
        { dimension: 'business', op: 'eq', values: [businesses[0] as string] },
      ]);
      await check(ROLLUP_FLOW, ['status', 'week'], 'this_quarter', [
        { dimension: 'status', op: 'neq', values: ['cancelled'] },
      ]);
      // Substrings ignore case and never match a null label; any-groups OR across dimensions.
      await check(METRIC_NAMES, ['project'], 'last_90_days', [
        {
          any: [
            { dimension: 'project', op: 'contains', values: ['ALP'] },
            { any: [{ any: [{ dimension: 'assignee', op: 'in', values: ['bob', null] }] }] },
          ],
        },
        { dimension: 'status', op: 'not_contains', values: ['CANC'] },
      ]);
      await check(OPEN_COUNTS, [], 'all_time', [
        { dimension: 'assignee', op: 'not_contains', values: ['n', 'Y'] },
      ]);
      await check(IN_STATUS, ['status', 'week'], 'last_90_days', [
        { dimension: 'status', op: 'neq', values: ['open'] },
      ]);
    });
  });
}

/** Each case runs on up to four sources: generous for a busy 2-core machine. */
const CASE_TIMEOUT = 120_000;
const answered = new Set<string>();
/**
 * Whether completions had work and blocked time or none, over the seeds of a file (a short
 * history may lack some): the flow times would prove little if every one were alike.
 */
const completionKinds = new Set<string>();
let engines: Engines;
let deps: AnalyticsDeps;
let setup: TestConfig;

/**
 * Registers the oracle for `cases` on one set of engines: each case a seeded history and the
 * zone its periods are resolved in. The seeds are split over two files so they run side by side.
 * `sources`: the sources these cases must have answered from between them, besides facts.
 */
export function describeAnalyticsOracle(
  cases: ReadonlyArray<{ seed: number; tz: string }>,
  sources: readonly string[],
): void {
  describe('analytics oracle: every source ClickHouse answers from equals an independent computation', () => {
    beforeAll(async () => {
      setup = await testConfig();
      engines = await openEngines(setup.config);
      deps = analyticsDeps(engines, { now: () => NOW });
    });
    afterAll(async () => {
      await engines.close();
      await setup.cleanup();
    });

    for (const { seed, tz } of cases) oracleSuite(seed, tz);

    it('ran every source it names, besides facts', () => {
      expect([...answered].sort()).toEqual(['facts', ...sources].sort());
    });

    it('met completions with and without work and blocked time', () => {
      expect([...completionKinds].sort()).toEqual([
        'blocked',
        'never blocked',
        'never started',
        'started',
      ]);
    });
  });
}
