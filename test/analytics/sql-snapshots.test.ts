import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timeDimension } from '../../libs/analytics/catalog/catalog.ts';
import { firstFactStatement } from '../../libs/analytics/compile/fact-bounds.ts';
import type { Statement } from '../../libs/analytics/compile/own-reads.ts';
import { horizonStatement } from '../../libs/analytics/execute/answer-validity.ts';
import { parseQuery, type QueryRequest } from '../../libs/analytics/parse/query-parser.ts';
import { resolveQueryPeriod } from '../../libs/analytics/period/date-range.ts';
import { planQuery, type QueryPlan } from '../../libs/analytics/plan/query-plan.ts';
import { prepareQuery } from '../../libs/analytics/query.service.ts';
import { ROLLUP_NAMES, type SourceName } from '../../libs/analytics/sources/rollups.ts';
import { businessScope } from '../../libs/auth/access.ts';
import type { ClickHouse } from '../../libs/storage/clickhouse.ts';
import {
  answerOf,
  type Bound,
  boundText,
  engineWithOneFact,
  snapshotFile,
} from '../support/sql-snapshot.ts';

/*
 * Every statement a dashboard query sends to ClickHouse, one `.sql` file per query under
 * __snapshots__/dashboard-queries/: a change to the compiler shows up as a reviewable diff of
 * text and bound values. Each file is also run on chDB, so a snapshot is SQL the engine takes.
 */

// A Wednesday; the one fact of the engine run lies the day before.
const NOW = new Date('2026-11-25T10:30:00Z');
const FIRST_FACT = new Date('2026-11-24T09:00:00Z');
const ALLOWED = ['acme'];
const MAX_ROWS = 10_000;
const READY = new Set(ROLLUP_NAMES);

interface DashboardQuery {
  name: string;
  request: QueryRequest;
  /** Read from this source rather than the planner's first choice. */
  source?: SourceName;
  /** The page of current rows a comparison is asked for. */
  page?: Array<Record<string, unknown>>;
}

const DASHBOARD: DashboardQuery[] = [
  {
    name: 'counts-by-week',
    request: {
      metrics: ['tasks_created', 'tasks_completed'],
      dimensions: ['week'],
      period: 'last_90_days',
    },
  },
  {
    name: 'counts-by-week-on-facts',
    request: {
      metrics: ['tasks_created', 'tasks_completed'],
      dimensions: ['week'],
      period: 'last_90_days',
    },
    source: 'facts',
  },
  {
    name: 'cycle-time-percentiles',
    request: {
      metrics: ['p50_cycle_time_hours', 'p90_cycle_time_hours', 'avg_cycle_time_hours'],
      dimensions: ['project'],
      period: 'last_30_days',
    },
  },
  {
    name: 'cycle-time-percentiles-on-facts',
    request: {
      metrics: ['p50_cycle_time_hours', 'p90_cycle_time_hours', 'avg_cycle_time_hours'],
      dimensions: ['project'],
      period: 'last_30_days',
    },
    source: 'facts',
  },
  {
    name: 'cumulative-flow',
    request: {
      metrics: ['tasks_in_status'],
      dimensions: ['status', 'week'],
      period: 'last_90_days',
    },
  },
  {
    name: 'cumulative-flow-on-facts',
    request: {
      metrics: ['tasks_in_status'],
      dimensions: ['status', 'week'],
      period: 'last_90_days',
    },
    source: 'facts',
  },
  {
    name: 'blocked-by-week-tokyo',
    request: {
      metrics: ['blocked_tasks'],
      dimensions: ['week'],
      period: 'last_30_days',
      timezone: 'Asia/Tokyo',
    },
  },
  {
    name: 'blocked-by-week-tokyo-on-facts',
    request: {
      metrics: ['blocked_tasks'],
      dimensions: ['week'],
      period: 'last_30_days',
      timezone: 'Asia/Tokyo',
    },
    source: 'facts',
  },
  {
    name: 'completed-by-day-vs-previous-period',
    request: {
      metrics: ['tasks_completed'],
      dimensions: ['day'],
      period: 'this_week',
      compare: 'previous_period',
    },
    page: [{ day: '2026-11-23' }],
  },
  {
    name: 'created-by-project-vs-previous-year-with-totals',
    request: {
      metrics: ['tasks_created', 'open_tasks'],
      dimensions: ['project'],
      period: 'this_month',
      compare: 'previous_year',
      include: ['totals'],
    },
    page: [{ project: 'Apollo' }, { project: null }],
  },
  {
    name: 'completion-by-assignee-with-totals',
    request: {
      metrics: ['tasks_created', 'completion_rate'],
      dimensions: ['assignee'],
      period: 'this_month',
      include: ['totals'],
    },
  },
  {
    name: 'filters-of-every-operator',
    request: {
      metrics: ['tasks_created', 'tasks_completed'],
      dimensions: ['project'],
      period: 'last_7_days',
      filters: [
        { dimension: 'project', op: 'in', values: ['Apollo', 'Zephyr'] },
        { dimension: 'status', op: 'not_in', values: ['cancelled'] },
        { dimension: 'assignee', op: 'neq', values: [null] },
        {
          any: [
            { dimension: 'assignee', op: 'eq', values: ['ana'] },
            { dimension: 'assignee', op: 'contains', values: ['bot', 'ci'] },
          ],
        },
        { dimension: 'project', op: 'not_contains', values: ['archive'] },
      ],
    },
  },
  {
    name: 'open-by-assignee-third-page',
    request: {
      metrics: ['open_tasks', 'overdue_tasks'],
      dimensions: ['assignee'],
      period: 'today',
      order_by: [{ field: 'open_tasks', direction: 'desc' }],
      limit: 20,
      offset: 40,
    },
  },
  {
    name: 'all-time-by-month',
    request: {
      metrics: ['open_tasks', 'tasks_created'],
      dimensions: ['month'],
      period: 'all_time',
    },
  },
  {
    name: 'created-by-project-and-week-zero-filled',
    request: {
      metrics: ['tasks_created', 'open_tasks'],
      dimensions: ['project', 'week'],
      period: 'last_30_days',
      fill: 'zero',
    },
  },
];

/** The plan `prepareQuery` makes at NOW, with the first fact where an all_time series needs it. */
function plannedAt(dashboard: DashboardQuery): QueryPlan & { businesses: string[] | null } {
  const query = parseQuery(dashboard.request, { maxRows: MAX_ROWS });
  const businesses = businessScope(ALLOWED, query.business);
  const period = resolveQueryPeriod(query.period, NOW, query.timezone, query.weekStart);
  const since = period.name === 'all_time' && timeDimension(query) ? FIRST_FACT : null;
  const plan = planQuery(query, period, {
    now: NOW,
    businesses,
    maxRows: MAX_ROWS,
    since,
    ready: READY,
    ...(dashboard.source ? { force: dashboard.source } : {}),
  });
  return { ...plan, businesses };
}

/** A statement the query sends, with the columns of its rows where it answers metrics. */
interface Sent {
  title: string;
  bound: Bound;
  columns?: string[];
}

/** Each statement the query may send, titled, in the order they run. */
function statementsOf(
  dashboard: DashboardQuery,
  plan: QueryPlan & { businesses: string[] | null },
): Sent[] {
  const found: Sent[] = [];
  const { dimensions, metrics } = plan.query;
  const add = (title: string, statement: Statement | null, labels = dimensions) => {
    if (!statement) return;
    const { sql, params, ownReads } = statement;
    found.push(
      { title, bound: { sql, params }, columns: [...labels, ...metrics].sort() },
      { title: `${title}: own reads`, bound: ownReads, columns: ['bytes', 'rows'] },
    );
  };
  if (plan.period.name === 'all_time' && timeDimension(plan.query)) {
    const bound = firstFactStatement(plan.businesses);
    found.push({ title: 'first fact (where the buckets start)', bound });
  }
  add(`rows from ${plan.source}`, plan.rows);
  add('totals', plan.totals, []);
  add('comparison totals', plan.comparison?.totals ?? null, []);
  if (plan.comparison) {
    const page = dashboard.page ?? [];
    add(`comparison rows for the page ${JSON.stringify(page)}`, plan.comparison.rows(page));
  }
  if (plan.labels) found.push({ title: 'labels the filters name', bound: plan.labels });
  const horizon = horizonStatement(plan, NOW, plan.businesses);
  found.push({ title: 'horizon (how long the answer holds)', bound: horizon });
  return found;
}

const fileOf = (name: string) => `./__snapshots__/dashboard-queries/${name}.sql`;

describe('dashboard query statements', () => {
  it.each(DASHBOARD)('$name', async (dashboard) => {
    const plan = plannedAt(dashboard);
    if (dashboard.source) expect(plan.source).toBe(dashboard.source);
    const heading = [
      `request: ${JSON.stringify(dashboard.request)}`,
      `now: ${NOW.toISOString()}, businesses: ${JSON.stringify(ALLOWED)}`,
      `exact sources: ${plan.sources.join(', ')}`,
    ];
    const sections = statementsOf(dashboard, plan).map((sent) => boundText(sent.title, sent.bound));
    await expect(snapshotFile(heading, sections)).toMatchFileSnapshot(fileOf(dashboard.name));
  });

  it('reads rollups where one answers and facts where none does', () => {
    const sources = Object.fromEntries(DASHBOARD.map((d) => [d.name, plannedAt(d).source]));
    expect(sources['counts-by-week']).toBe('rollup_business_day');
    expect(sources['blocked-by-week-tokyo']).toBe('rollup_business_blocked_15m');
    // completion_rate by assignee: no rollup keeps both its completions and the assignee.
    expect(sources['completion-by-assignee-with-totals']).toBe('facts');
  });
});

describe('dashboard query statements on chDB', () => {
  let ch: ClickHouse;
  beforeAll(async () => {
    ch = await engineWithOneFact(FIRST_FACT);
  }, 300_000);
  afterAll(async () => ch?.close());

  const run = (statement: Bound) => answerOf(ch, statement);

  it.each(DASHBOARD)(
    '$name: prepareQuery compiles the snapshot, and the engine runs it',
    async (dashboard) => {
      const deps = { clickhouse: ch.client, rollups: () => READY, maxRows: MAX_ROWS };
      const prepared = await prepareQuery(deps, dashboard.request, ALLOWED, NOW, {
        force: dashboard.source,
      });
      const planned = statementsOf(dashboard, plannedAt(dashboard));
      expect(statementsOf(dashboard, prepared)).toEqual(planned);
      for (const { bound, columns } of planned) {
        const rows = await run(bound);
        if (columns) for (const row of rows) expect(Object.keys(row).sort()).toEqual(columns);
      }
    },
    120_000,
  );

  it('counts the one fact in its week, from the rollup and from facts alike', async () => {
    for (const name of ['counts-by-week', 'counts-by-week-on-facts']) {
      const dashboard = DASHBOARD.find((d) => d.name === name) as DashboardQuery;
      const rows = await run(plannedAt(dashboard).rows);
      expect(rows).toEqual([{ week: '2026-11-23', tasks_created: 1, tasks_completed: 0 }]);
    }
  });
});
