import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DIMENSION_NAMES,
  METRIC_NAMES,
  METRICS,
  timeDimension,
} from '../../libs/analytics/catalog/catalog.ts';
import { countedRows } from '../../libs/analytics/compile/counted-rows.ts';
import { ZONES_STATEMENT } from '../../libs/analytics/compile/engine-zones.ts';
import {
  firstFactStatement,
  nextFactsStatement,
} from '../../libs/analytics/compile/fact-bounds.ts';
import { knownLabelsStatement } from '../../libs/analytics/compile/known-labels.ts';
import {
  commonTables,
  flowSelect,
  spans,
  stateSelect,
} from '../../libs/analytics/compile/metric-sources.ts';
import { compileOwnReads, scansOf } from '../../libs/analytics/compile/own-reads.ts';
import {
  type CompileOptions,
  compileQuery,
  compileRows,
} from '../../libs/analytics/compile/query-compiler.ts';
import { completedTasksTable, flowSource } from '../../libs/analytics/compile/sql/flow-source.ts';
import { BUSINESSES } from '../../libs/analytics/compile/sql/query-params.ts';
import {
  cte,
  selectLines,
  unionAll,
  withSettings,
} from '../../libs/analytics/compile/sql/select-clauses.ts';
import type { SourceContext } from '../../libs/analytics/compile/sql/source-context.ts';
import {
  dimensionColumn,
  filterConditions,
  metricColumn,
} from '../../libs/analytics/compile/sql/source-expressions.ts';
import {
  ident,
  join,
  raw,
  type SqlValue,
  sql,
} from '../../libs/analytics/compile/sql/sql-value.ts';
import { factsStateTables, spanSelect } from '../../libs/analytics/compile/sql/state-from-facts.ts';
import { rollupStateTable } from '../../libs/analytics/compile/sql/state-from-rollups.ts';
import { stateSource } from '../../libs/analytics/compile/sql/state-select.ts';
import { compileValues } from '../../libs/analytics/compile/values-compiler.ts';
import { zeroFilled } from '../../libs/analytics/compile/zero-fill.ts';
import { parseQuery, type QueryRequest } from '../../libs/analytics/parse/query-parser.ts';
import { stateBuckets, timeBuckets } from '../../libs/analytics/period/buckets.ts';
import { resolveQueryPeriod } from '../../libs/analytics/period/date-range.ts';
import { resolvePeriod } from '../../libs/analytics/period/period.ts';
import type { ClickHouse } from '../../libs/storage/clickhouse.ts';
import {
  answerOf,
  type Bound,
  boundText,
  engineWithOneFact,
  pieceText,
  snapshotFile,
} from '../support/sql-snapshot.ts';

/*
 * What each SQL builder of libs/analytics/compile/ makes of a representative input, one `.sql`
 * file per builder under __snapshots__/sql-builders/ (pieces with their placeholders' types,
 * statements with their bound values). The whole statements among them also run on chDB.
 */

const NOW = new Date('2026-11-25T10:30:00Z');
/** The one fact the statements run over on chDB. */
const FACT_AT = new Date('2026-11-24T09:00:00Z');
const SCOPE = sql`business IN ${BUSINESSES}`;

/** A compiled query as the planner would ask for it, on `source`. */
function compiled(
  request: QueryRequest,
  extra: Partial<CompileOptions> = {},
): { query: ReturnType<typeof parseQuery>; options: CompileOptions } {
  const query = parseQuery(request);
  const period = resolveQueryPeriod(query.period, NOW, query.timezone, query.weekStart);
  const time = timeDimension(query);
  const buckets = stateBuckets(period, time ? timeBuckets(period, time, null) : null, NOW);
  const options = { period, businesses: ['acme'], rowLimit: 100, buckets, ...extra };
  return { query, options };
}

function context(overrides: Partial<SourceContext>): SourceContext {
  return {
    dimensions: [],
    metrics: [],
    filters: [],
    scope: SCOPE,
    union: false,
    source: 'facts',
    instants: 1,
    stateBase: null,
    weekStart: 'monday',
    ...overrides,
  };
}

const piece = (title: string, value: SqlValue) => pieceText(title, value);
const pieces = (title: string, values: SqlValue[]) => pieceText(title, join(values, '\n'));

const union = compiled(
  {
    metrics: ['tasks_created', 'blocked_tasks'],
    dimensions: ['week'],
    period: 'last_30_days',
    filters: [{ dimension: 'project', op: 'eq', values: ['Apollo'] }],
    order_by: [{ field: 'blocked_tasks', direction: 'desc' }],
  },
  { offset: 20 },
);
const rate = compiled(
  { metrics: ['completion_rate', 'open_tasks'], dimensions: ['assignee'], period: 'this_month' },
  { businesses: null },
);
const onRollup = compiled(
  { metrics: ['blocked_tasks', 'tasks_completed'], dimensions: ['day'], period: 'last_7_days' },
  { source: 'rollup_business_blocked_15m', stateBase: 'rollup_projects_blocked_day' },
);
const filled = compiled(
  {
    metrics: ['tasks_created', 'open_tasks'],
    dimensions: ['project', 'week'],
    period: 'this_month',
  },
  { fill: { labels: ['2026-10-26', '2026-11-02', '2026-11-09'], started: 3 } },
);

/** Statements that run as they are, on chDB too. */
const STATEMENTS: Record<string, Array<[string, Bound]>> = {
  'query-compiler': [
    [
      'tasks created by day, every business, a page of 5',
      compileQuery(parseQuery({ metrics: ['tasks_created'], dimensions: ['day'] }), {
        period: resolvePeriod('last_7_days', NOW, 'UTC'),
        businesses: null,
        rowLimit: 5,
      }),
    ],
    [
      'flow and state merged by week, filtered, the third page of 20',
      compileQuery(union.query, union.options),
    ],
    ['completion rate and open tasks by assignee', compileQuery(rate.query, rate.options)],
    [
      'blocked tasks and completions on a 15-minute rollup with a daily base',
      compileQuery(onRollup.query, onRollup.options),
    ],
    ['zero-filled by project and week', compileQuery(filled.query, filled.options)],
  ],
  'fact-bounds': [
    ['first fact of some businesses', firstFactStatement(['acme', 'beta'])],
    ['first fact of every business', firstFactStatement(null)],
    ['next fact at or after now', nextFactsStatement(NOW, null, ['acme'])],
    [
      'next fact, and next compared fact after a cut',
      nextFactsStatement(
        NOW,
        { cut: new Date('2025-11-25T10:30:00Z'), windowEnd: new Date('2025-11-25T11:30:00Z') },
        null,
      ),
    ],
  ],
  'known-labels': [
    [
      'labels named by eq and in, a group among them',
      knownLabelsStatement(
        [
          { dimension: 'project', op: 'in', values: ['Apollo', null] },
          { dimension: 'status', op: 'neq', values: ['done'] },
          {
            any: [
              { dimension: 'assignee', op: 'eq', values: ['ana'] },
              { dimension: 'assignee', op: 'contains', values: ['bot'] },
            ],
          },
        ],
        ['acme'],
      ) as Bound,
    ],
  ],
  'values-compiler': [
    [
      'projects on facts, this month, by a prefix',
      compileValues(
        {
          business: 'acme',
          dimension: 'project',
          prefix: 'ap',
          period: resolvePeriod('this_month', NOW, 'Europe/Paris'),
          limit: 50,
        },
        'facts',
      ),
    ],
    [
      'statuses on a rollup, all time',
      compileValues(
        { business: 'acme', dimension: 'status', prefix: '', period: null, limit: 50 },
        'rollup_labels_all',
      ),
    ],
  ],
  'engine-zones': [['zones the engine loads', { sql: ZONES_STATEMENT, params: {} }]],
  'counted-rows': [
    [
      'rows with their count, settings kept last',
      countedRows(compileRows(union.query, union.options), 'total_rows'),
    ],
  ],
  'own-reads': [
    [
      'a statement on facts: the period twice over (completions), state up to now',
      compileOwnReads(
        compileRows(rate.query, rate.options),
        scansOf(rate.query, rate.options),
        null,
      ),
    ],
    [
      'a statement on a 15-minute rollup with a daily base',
      compileOwnReads(
        compileRows(onRollup.query, onRollup.options),
        scansOf(onRollup.query, onRollup.options),
        ['acme'],
      ),
    ],
  ],
};

const facts = context({ dimensions: ['week', 'project'], instants: 4 });
const filters = [
  { dimension: 'project' as const, op: 'eq' as const, values: ['Apollo'] },
  { dimension: 'status' as const, op: 'not_in' as const, values: ['x'] },
];

/** Pieces: clauses and tables a statement is built from. */
const PIECES: Record<string, string[]> = {
  'metric-sources': [
    (() => {
      const ctx = context({
        ...facts,
        metrics: ['completion_rate', 'open_tasks'],
        union: true,
      });
      return pieces('common tables, flow select and state select of a union on facts', [
        ...commonTables(ctx),
        ...flowSelect(ctx),
        raw('UNION ALL'),
        ...stateSelect(ctx),
      ]);
    })(),
    piece(
      'spans of one entity, on one line',
      raw(spans('task_gid', 'task_gid, status', "kind IN ('task_created', 'task_updated')")),
    ),
  ],
  'sql/flow-source': [
    piece(
      'flow on facts, filtered',
      selectLines(
        flowSource(
          context({ ...facts, metrics: ['tasks_created', 'avg_cycle_time_hours'], filters }),
        ),
      ),
    ),
    piece(
      'flow on a rollup keeping completions and work times',
      selectLines(
        flowSource(
          context({
            ...facts,
            dimensions: ['day'],
            metrics: ['completion_rate', 'avg_work_time_hours'],
            source: 'rollup_business_blocked_15m',
          }),
        ),
      ),
    ),
    piece(
      'tasks completed in their creation week, on facts',
      completedTasksTable(context({ ...facts, metrics: ['completion_rate'] })),
    ),
  ],
  'sql/state-from-facts': [
    pieces(
      'replayed task and edge spans for blocked tasks',
      factsStateTables(context({ ...facts, metrics: ['blocked_tasks'] })),
    ),
    pieces(
      'open and overdue counts summed from changes',
      factsStateTables(context({ ...facts, metrics: ['open_tasks', 'overdue_tasks'] })),
    ),
    pieces(
      'tasks in every status summed from changes',
      factsStateTables(context({ ...facts, dimensions: ['status'], metrics: ['tasks_in_status'] })),
    ),
    piece(
      'a span select',
      selectLines(spanSelect(ident('task_gid'), ident('status'), raw("kind = 'task_updated'"))),
    ),
  ],
  'sql/state-from-rollups': [
    piece(
      'one instant, every row counted once',
      rollupStateTable(
        context({
          dimensions: ['project'],
          metrics: ['overdue_tasks'],
          source: 'rollup_labels_all',
        }),
      ),
    ),
    piece(
      'several instants, changes carried into later buckets',
      rollupStateTable(
        context({
          ...facts,
          metrics: ['open_tasks', 'overdue_tasks', 'blocked_tasks'],
          source: 'rollup_projects_blocked_day',
        }),
      ),
    ),
    piece(
      'several instants with a daily base, tasks in every status',
      rollupStateTable(
        context({
          dimensions: ['day', 'status'],
          metrics: ['tasks_in_status'],
          source: 'rollup_business_blocked_15m',
          stateBase: 'rollup_projects_blocked_day',
          instants: 7,
        }),
      ),
    ),
  ],
  'sql/state-select': [
    piece(
      'blocked tasks on facts, filtered',
      selectLines(stateSource(context({ ...facts, metrics: ['blocked_tasks'], filters }))),
    ),
    piece(
      'tasks in status on a rollup',
      selectLines(
        stateSource(
          context({
            dimensions: ['status'],
            metrics: ['tasks_in_status'],
            source: 'rollup_labels_day',
          }),
        ),
      ),
    ),
  ],
  'sql/source-expressions': [
    pieces(
      'every dimension at an instant (weeks from Monday)',
      DIMENSION_NAMES.map((name) => dimensionColumn(name, 'occurred_at', 'monday')),
    ),
    piece('a week from Sunday', dimensionColumn('week', 'slot', 'sunday')),
    pieces(
      'a condition of every operator, a group among them',
      filterConditions(
        [
          { dimension: 'project', op: 'eq', values: ['a'] },
          { dimension: 'project', op: 'neq', values: ['a'] },
          { dimension: 'status', op: 'in', values: ['a'] },
          { dimension: 'status', op: 'not_in', values: ['a'] },
          {
            any: [
              { dimension: 'assignee', op: 'contains', values: ['a'] },
              { dimension: 'assignee', op: 'not_contains', values: ['a'] },
            ],
          },
          { dimension: 'week', op: 'eq', values: ['2026-11-23'] },
        ],
        'occurred_at',
        'monday',
      ),
    ),
    pieces(
      'every metric on facts',
      METRIC_NAMES.map((name) => metricColumn(context({}), name, METRICS[name].source)),
    ),
    pieces(
      'every metric a rollup keeps',
      METRIC_NAMES.filter((name) => METRICS[name].sql.rollup !== null).map((name) =>
        metricColumn(context({ source: 'rollup_labels_day' }), name, METRICS[name].source),
      ),
    ),
  ],
  'sql/select-clauses': [
    piece(
      'every clause',
      withSettings(
        selectLines({
          distinct: true,
          columns: [ident('j'), raw('sum(sign) AS weight')],
          from: ident('facts'),
          arrayJoin: raw('range(1, 3) AS k'),
          where: [SCOPE, null, raw('kind = 1')],
          groupBy: [ident('j')],
          having: raw('weight != 0'),
        }),
        [raw("join_algorithm = 'partial_merge'")],
      ),
    ),
    piece(
      'a common table of two selects joined',
      sql`${cte('t', { columns: [ident('j')], from: ident('facts') })}, ${ident('u')} AS (${unionAll(
        { columns: [ident('j')], from: ident('a') },
        { columns: [ident('j')], from: ident('b'), where: [raw('j > 0')] },
      )})`,
    ),
  ],
  'zero-fill': [
    (() => {
      const inner = raw('SELECT project, week, tasks_created FROM facts');
      const { table, lines } = zeroFilled(
        parseQuery({ metrics: ['tasks_created', 'open_tasks'], dimensions: ['project', 'week'] }),
        inner,
      );
      return pieces('the rows joined to every label × bucket', [sql`WITH ${table}`, ...lines]);
    })(),
  ],
};

const fileOf = (name: string) => `./__snapshots__/sql-builders/${name.replace('/', '-')}.sql`;

describe('SQL builders', () => {
  it.each(Object.keys(STATEMENTS))('%s', async (name) => {
    const sections = (STATEMENTS[name] ?? []).map(([title, bound]) => boundText(title, bound));
    const heading = [`libs/analytics/compile/${name}.ts, now ${NOW.toISOString()}`];
    await expect(snapshotFile(heading, sections)).toMatchFileSnapshot(fileOf(name));
  });

  it.each(Object.keys(PIECES))('%s', async (name) => {
    const heading = [`libs/analytics/compile/${name}.ts`];
    await expect(snapshotFile(heading, PIECES[name] ?? [])).toMatchFileSnapshot(fileOf(name));
  });
});

describe('SQL builder statements on chDB', () => {
  let ch: ClickHouse;
  beforeAll(async () => {
    ch = await engineWithOneFact(FACT_AT);
  }, 300_000);
  afterAll(async () => ch?.close());

  const all = Object.values(STATEMENTS).flat();
  it.each(all)('runs: %s', async (_title, statement) => {
    await expect(answerOf(ch, statement)).resolves.toBeInstanceOf(Array);
  });

  it('finds the one fact by its labels, its prefix and its instant', async () => {
    const first = (name: string): Bound => {
      const entry = STATEMENTS[name]?.[0];
      if (!entry) throw new Error(`no statement of ${name}`);
      return entry[1];
    };
    // Its rows come in no set order (its caller reads them as a set): on servers the engine
    // answered the assignee first.
    const labels = await answerOf(ch, first('known-labels'));
    expect(labels).toHaveLength(2);
    expect(labels).toEqual(
      expect.arrayContaining([
        { dimension: 'project', label: 'Apollo' },
        { dimension: 'assignee', label: 'ana' },
      ]),
    );
    expect(await answerOf(ch, first('values-compiler'))).toEqual([{ value: 'Apollo', n: 1 }]);
    expect(await answerOf(ch, first('fact-bounds'))).toEqual([
      { first: FACT_AT.getTime(), facts: 1 },
    ]);
  });

  it('answers the zones the engine loads, the zone of a query among them', async () => {
    const result = await ch.client.query({ query: ZONES_STATEMENT, format: 'JSONEachRow' });
    const zones = (await result.json<{ time_zone: string }>()).map((row) => row.time_zone);
    expect(zones).toContain('Asia/Tokyo');
  });
});
