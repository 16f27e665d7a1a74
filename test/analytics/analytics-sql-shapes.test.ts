import { describe, expect, it } from 'vitest';
import { DIMENSIONS } from '../../libs/analytics/catalog/catalog.ts';
import { compileQuery } from '../../libs/analytics/compile/query-compiler.ts';
import { parseQuery, type QueryRequest } from '../../libs/analytics/parse/query-parser.ts';
import { stateBuckets, timeBuckets } from '../../libs/analytics/period/buckets.ts';
import { resolveQueryPeriod } from '../../libs/analytics/period/date-range.ts';
import { resolvePeriod } from '../../libs/analytics/period/period.ts';
import { queryShapeSnapshot as snapshot } from '../support/sql-snapshot.ts';

// 2026-11-22 is a Sunday.
const NOW = new Date('2026-11-22T15:30:00Z');

function compile(request: QueryRequest, businesses: string[] | null = ['acme']) {
  const query = parseQuery(request);
  const period = resolveQueryPeriod(query.period, NOW, query.timezone);
  const time = query.dimensions.find((name) => DIMENSIONS[name].time);
  const buckets = stateBuckets(period, time ? timeBuckets(period, time, null) : null, NOW);
  return compileQuery(query, { period, businesses, rowLimit: 100, buckets });
}

describe('compiled statement per query shape', () => {
  it('open and overdue counts sum changes of state up to the period end, capped at now, in the query zone', async () => {
    const compiled = compile({
      metrics: ['open_tasks', 'overdue_tasks'],
      dimensions: ['project'],
      period: 'this_month',
      timezone: 'Europe/Paris',
    });
    expect(compiled.params).toEqual({
      tz: 'Europe/Paris',
      businesses: ['acme'],
      starts: ['2026-10-31 23:00:00.000'],
      ats: ['2026-11-22 15:30:00.000'],
      state_to: '2026-11-22 15:30:00.000',
      limit: 100,
    });
    await snapshot('open-and-overdue-by-project', compiled);
  });

  it('tasks in every status sum every change, the open ones counted apart for open_tasks', async () => {
    const compiled = compile({
      metrics: ['tasks_in_status', 'open_tasks'],
      dimensions: ['status'],
      period: 'this_month',
      timezone: 'UTC',
    });
    await snapshot('in-status-and-open-by-status', compiled);
  });

  it('merges flow and state sources row by row, with filters and the caller order', async () => {
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
    expect(compiled.params).toEqual({
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
    });
    await snapshot('created-and-blocked-by-week-filtered', compiled);
  });

  it('completion_rate looks up completions inside the period in a bound-value CTE, for creations only', async () => {
    const compiled = compile(
      { metrics: ['completion_rate'], dimensions: ['assignee'], period: 'yesterday' },
      null,
    );
    expect(compiled.params).toEqual({
      from: '2026-11-21 00:00:00.000',
      to: '2026-11-22 00:00:00.000',
      limit: 100,
    });
    await snapshot('completion-rate-by-assignee', compiled);
  });

  it('completion_rate by a time bucket looks up only completions in their creation bucket', async () => {
    const compiled = compile({
      metrics: ['completion_rate'],
      dimensions: ['week'],
      period: 'last_week',
      timezone: 'Asia/Kolkata',
    });
    await snapshot('completion-rate-by-week', compiled);
  });

  it('cycle-time percentiles are null, not NaN, when nothing was completed', async () => {
    await snapshot(
      'cycle-time-percentile-and-average',
      compile({ metrics: ['p90_cycle_time_hours', 'avg_cycle_time_hours'] }),
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
