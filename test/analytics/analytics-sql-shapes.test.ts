import { describe, expect, it } from 'vitest';
import { DIMENSIONS } from '../../libs/analytics/catalog/catalog.ts';
import { compileQuery } from '../../libs/analytics/compile/query-compiler.ts';
import { parseQuery, type QueryRequest } from '../../libs/analytics/parse/query-parser.ts';
import { stateBuckets, timeBuckets } from '../../libs/analytics/period/buckets.ts';
import { resolveQueryPeriod } from '../../libs/analytics/period/date-range.ts';
import { resolvePeriod } from '../../libs/analytics/period/period.ts';

// 2026-11-22 is a Sunday.
const NOW = new Date('2026-11-22T15:30:00Z');

function compile(request: QueryRequest, businesses: string[] | null = ['acme']) {
  const query = parseQuery(request);
  const period = resolveQueryPeriod(query.period, NOW, query.timezone);
  const time = query.dimensions.find((name) => DIMENSIONS[name].time);
  const buckets = stateBuckets(period, time ? timeBuckets(period, time, null) : null, NOW);
  return compileQuery(query, { period, businesses, rowLimit: 100, buckets });
}

const T = "DateTime64(3, 'UTC')";
const ATS = `{ats:Array(${T})}`;
const BUCKET_JOIN = `ARRAY JOIN arrayFilter(i -> ${ATS}[i] > occurred_at AND ${ATS}[i] <= next_at, arrayEnumerate(${ATS})) AS i`;
const spans = (partition: string, columns: string, where: string) =>
  `SELECT ${columns}, occurred_at, leadInFrame(occurred_at, 1, toDateTime64('2299-12-31 00:00:00', 3, 'UTC')) OVER (PARTITION BY ${partition} ORDER BY occurred_at, fact_id ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS next_at FROM facts WHERE ${where}`;
const SCOPE = 'business IN {businesses:Array(String)}';
const BEFORE = `occurred_at < {state_to:${T}}`;
const TASK_AT = `task_at AS (SELECT {starts:Array(${T})}[i] AS bucket, ${ATS}[i] AS at, task_gid, business, project, assignee, status, due_on, 1 AS weight FROM (${spans('task_gid', 'task_gid, kind, business, project, assignee, status, due_on', `${SCOPE} AND kind IN ('task_created', 'task_updated', 'task_completed', 'task_deleted') AND ${BEFORE}`)}) ${BUCKET_JOIN} WHERE kind != 'task_deleted' AND status IN ('open', 'in_progress'))`;
const EDGE_AT = `edge_at AS (SELECT ${ATS}[i] AS at, task_gid, dependency_gid FROM (${spans('task_gid, dependency_gid', 'task_gid, dependency_gid, kind', `${SCOPE} AND kind IN ('dependency_added', 'dependency_removed') AND ${BEFORE}`)}) ${BUCKET_JOIN} WHERE kind = 'dependency_added')`;
const BLOCKED_AT =
  'blocked_at AS (SELECT DISTINCT edge_at.at AS at, edge_at.task_gid AS task_gid, 1 AS blocked FROM edge_at INNER JOIN task_at AS dependency ON dependency.at = edge_at.at AND dependency.task_gid = edge_at.dependency_gid)';

const INTERVAL = `arrayCount(a -> a <= occurred_at, ${ATS}) AS j`;
const OPEN_COUNTS = [
  `task_at AS (SELECT {starts:Array(${T})}[k] AS bucket, ${ATS}[k] AS at, project, due_on, weight FROM (`,
  `SELECT j, project, due_on, sum(sign) AS weight FROM (`,
  `SELECT ${INTERVAL}, 1 AS sign, project, due_on FROM facts WHERE ${SCOPE} AND ${BEFORE} AND kind IN ('task_created', 'task_updated') AND status IN ('open', 'in_progress')`,
  ' UNION ALL ',
  `SELECT ${INTERVAL}, -1 AS sign, previous_project AS project, previous_due_on AS due_on FROM facts WHERE ${SCOPE} AND ${BEFORE} AND kind IN ('task_updated', 'task_deleted') AND previous_status IN ('open', 'in_progress')`,
  `) GROUP BY j, project, due_on HAVING weight != 0`,
  `) ARRAY JOIN range(j + 1, length(${ATS}) + 1) AS k)`,
].join('');

describe('compiled statement per query shape', () => {
  it('open and overdue counts sum changes of state up to the period end, capped at now, in the query zone', () => {
    const compiled = compile({
      metrics: ['open_tasks', 'overdue_tasks'],
      dimensions: ['project'],
      period: 'this_month',
      timezone: 'Europe/Paris',
    });
    expect(compiled).toEqual({
      sql: [
        `WITH ${OPEN_COUNTS}`,
        'SELECT project, sum(weight) AS open_tasks, sumIf(weight, due_on < toDate(at, {tz:String})) AS overdue_tasks',
        'FROM task_at',
        'GROUP BY project',
        'HAVING sum(weight) != 0',
        'ORDER BY project ASC',
        'LIMIT {limit:UInt32}',
      ].join('\n'),
      params: {
        tz: 'Europe/Paris',
        businesses: ['acme'],
        starts: ['2026-10-31 23:00:00.000'],
        ats: ['2026-11-22 15:30:00.000'],
        state_to: '2026-11-22 15:30:00.000',
        limit: 100,
      },
    });
  });

  it('tasks in every status sum every change, the open ones counted apart for open_tasks', () => {
    const compiled = compile({
      metrics: ['tasks_in_status', 'open_tasks'],
      dimensions: ['status'],
      period: 'this_month',
      timezone: 'UTC',
    });
    const change = (sign: string, status: string, kinds: string) =>
      `SELECT ${INTERVAL}, ${sign} AS sign, ${status} IN ('open', 'in_progress') AS is_open, ${status === 'status' ? 'status' : 'previous_status AS status'} FROM facts WHERE ${SCOPE} AND ${BEFORE} AND kind IN ${kinds}`;
    expect(compiled.sql).toBe(
      [
        [
          `WITH task_at AS (SELECT {starts:Array(${T})}[k] AS bucket, ${ATS}[k] AS at, status, weight, live FROM (`,
          'SELECT j, status, sumIf(sign, is_open) AS weight, sum(sign) AS live FROM (',
          change('1', 'status', "('task_created', 'task_updated')"),
          ' UNION ALL ',
          change('-1', 'previous_status', "('task_updated', 'task_deleted')"),
          ') GROUP BY j, status HAVING weight != 0 OR live != 0',
          `) ARRAY JOIN range(j + 1, length(${ATS}) + 1) AS k)`,
        ].join(''),
        'SELECT status, sum(live) AS tasks_in_status, sum(weight) AS open_tasks',
        'FROM task_at',
        'GROUP BY status',
        'HAVING sum(weight) != 0 OR sum(live) != 0',
        'ORDER BY status ASC',
        'LIMIT {limit:UInt32}',
      ].join('\n'),
    );
  });

  it('merges flow and state sources row by row, with filters and the caller order', () => {
    const compiled = compile({
      metrics: ['tasks_created', 'blocked_tasks'],
      dimensions: ['week'],
      period: 'last_week',
      filters: [
        { dimension: 'project', op: 'eq', values: ['p'] },
        { dimension: 'status', op: 'not_in', values: ['x', 'y'] },
      ],
      order_by: [{ field: 'blocked_tasks', direction: 'desc' }],
    });
    const filters = 'project = {f0:String} AND status NOT IN {f1:Array(String)}';
    expect(compiled).toEqual({
      sql: [
        `WITH ${TASK_AT},`,
        `${EDGE_AT},`,
        BLOCKED_AT,
        'SELECT week, max(tasks_created) AS tasks_created, max(blocked_tasks) AS blocked_tasks',
        'FROM (',
        "SELECT toString(toMonday(occurred_at, {tz:String})) AS week, countIf(kind = 'task_created') AS tasks_created, 0 AS blocked_tasks",
        'FROM facts',
        `WHERE ${SCOPE} AND occurred_at >= {from:${T}} AND occurred_at < {to:${T}} AND ${filters}`,
        'GROUP BY week',
        'UNION ALL',
        'SELECT toString(toMonday(bucket, {tz:String})) AS week, 0 AS tasks_created, sumIf(weight, blocked = 1) AS blocked_tasks',
        'FROM task_at LEFT JOIN blocked_at USING (at, task_gid)',
        `WHERE ${filters}`,
        'GROUP BY week',
        'HAVING sum(weight) != 0',
        ')',
        'GROUP BY week',
        'ORDER BY blocked_tasks DESC, week ASC',
        'LIMIT {limit:UInt32}',
        "SETTINGS join_algorithm = 'partial_merge'",
      ].join('\n'),
      params: {
        tz: 'UTC',
        from: '2026-11-09 00:00:00.000',
        to: '2026-11-16 00:00:00.000',
        businesses: ['acme'],
        starts: ['2026-11-09 00:00:00.000'],
        ats: ['2026-11-16 00:00:00.000'],
        state_to: '2026-11-16 00:00:00.000',
        f0: 'p',
        f1: ['x', 'y'],
        limit: 100,
      },
    });
  });

  it('completion_rate looks up completions inside the period in a bound-value CTE, for creations only', () => {
    const compiled = compile(
      { metrics: ['completion_rate'], dimensions: ['assignee'], period: 'yesterday' },
      null,
    );
    expect(compiled).toEqual({
      sql: [
        `WITH completed_tasks AS (SELECT task_gid FROM facts WHERE kind = 'task_completed' AND occurred_at >= {from:${T}} AND occurred_at < {to:${T}})`,
        "SELECT assignee, if(countIf(kind = 'task_created') = 0, NULL, countIf(kind = 'task_created' AND task_gid IN completed_tasks) / countIf(kind = 'task_created')) AS completion_rate",
        'FROM facts',
        `WHERE occurred_at >= {from:${T}} AND occurred_at < {to:${T}}`,
        'GROUP BY assignee',
        'ORDER BY assignee ASC',
        'LIMIT {limit:UInt32}',
        "SETTINGS short_circuit_function_evaluation = 'force_enable'",
      ].join('\n'),
      params: { from: '2026-11-21 00:00:00.000', to: '2026-11-22 00:00:00.000', limit: 100 },
    });
  });

  it('completion_rate by a time bucket looks up only completions in their creation bucket', () => {
    const { sql } = compile({
      metrics: ['completion_rate'],
      dimensions: ['week'],
      period: 'last_week',
      timezone: 'Asia/Kolkata',
    });
    const week = (t: string) => `toString(toMonday(${t}, {tz:String}))`;
    expect(sql.split('\n')[0]).toBe(
      `WITH completed_tasks AS (SELECT task_gid FROM facts WHERE ${SCOPE} AND kind = 'task_completed' AND occurred_at >= {from:${T}} AND occurred_at < {to:${T}} AND ${week('task_created_at')} = ${week('occurred_at')})`,
    );
  });

  it('cycle-time percentiles are null, not NaN, when nothing was completed', () => {
    const { sql } = compile({ metrics: ['p90_cycle_time_hours', 'avg_cycle_time_hours'] });
    const hours =
      '(toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at)) / 3600000';
    expect(sql.split('\n')[0]).toBe(
      `SELECT if(countIf(kind = 'task_completed') = 0, NULL, quantileExactInclusiveIf(0.9)(${hours}, kind = 'task_completed')) AS p90_cycle_time_hours, if(countIf(kind = 'task_completed') = 0, NULL, avgIf(${hours}, kind = 'task_completed')) AS avg_cycle_time_hours`,
    );
  });

  it('never puts request text into the SQL: filter values are parameters', () => {
    const hostile = "x'); DROP TABLE facts; --";
    const compiled = compile({
      metrics: ['tasks_created'],
      filters: [{ dimension: 'assignee', op: 'in', values: [hostile] }],
    });
    expect(compiled.sql).not.toContain(hostile);
    expect(compiled.params.f0).toEqual([hostile]);
  });
});

describe('state buckets', () => {
  const iso = (dates: Date[]) => dates.map((date) => date.toISOString());

  it('measures each bucket at its end, the current one at now, and skips the future', () => {
    const period = resolvePeriod('this_week', NOW, 'UTC');
    const buckets = stateBuckets(
      period,
      timeBuckets(period, 'day', null),
      new Date('2026-11-18T09:00:00Z'),
    );
    expect(iso(buckets.starts)).toEqual([
      '2026-11-16T00:00:00.000Z',
      '2026-11-17T00:00:00.000Z',
      '2026-11-18T00:00:00.000Z',
    ]);
    expect(iso(buckets.ats)).toEqual([
      '2026-11-17T00:00:00.000Z',
      '2026-11-18T00:00:00.000Z',
      '2026-11-18T09:00:00.000Z',
    ]);
  });

  it('clips weeks to the period and follows local midnight across DST', () => {
    // Paris leaves summer time on Sunday 2026-10-25.
    const now = new Date('2026-11-02T12:00:00Z');
    const period = resolvePeriod('last_month', now, 'Europe/Paris');
    const buckets = stateBuckets(period, timeBuckets(period, 'week', null), now);
    expect(iso(buckets.starts)).toEqual([
      '2026-09-30T22:00:00.000Z',
      '2026-10-04T22:00:00.000Z',
      '2026-10-11T22:00:00.000Z',
      '2026-10-18T22:00:00.000Z',
      '2026-10-25T23:00:00.000Z',
    ]);
    expect(iso(buckets.ats).at(-1)).toBe('2026-10-31T23:00:00.000Z');
  });

  it('starts all_time at the first fact', () => {
    const period = resolvePeriod('all_time', NOW, 'UTC');
    const since = new Date('2026-09-15T10:00:00Z');
    const buckets = stateBuckets(period, timeBuckets(period, 'month', since), NOW);
    // The first bucket is the one holding the first fact.
    expect(iso(buckets.starts)).toEqual([
      '2026-09-01T00:00:00.000Z',
      '2026-10-01T00:00:00.000Z',
      '2026-11-01T00:00:00.000Z',
    ]);
    expect(timeBuckets(period, 'day', null)).toEqual([]);
  });
});
