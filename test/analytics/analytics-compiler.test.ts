import { describe, expect, it } from 'vitest';
import { compileQuery } from '../../libs/analytics/compile/query-compiler.ts';
import { parseQuery } from '../../libs/analytics/parse/query-parser.ts';
import { resolveQueryPeriod } from '../../libs/analytics/period/date-range.ts';
import { resolvePeriod } from '../../libs/analytics/period/period.ts';
import { queryShapeSnapshot as snapshot } from '../support/sql-snapshot.ts';

const NOW = new Date('2026-11-22T15:30:00Z');

describe('query compiler', () => {
  it('compiles tasks_created by day into one parameterised statement', async () => {
    const query = parseQuery({
      metrics: ['tasks_created'],
      dimensions: ['day'],
      period: 'last_7_days',
    });
    const period = resolveQueryPeriod(query.period, NOW, query.timezone);
    const compiled = compileQuery(query, { period, businesses: ['acme', 'beta'], rowLimit: 100 });
    expect(compiled.params).toEqual({
      tz: 'UTC',
      businesses: ['acme', 'beta'],
      from: '2026-11-16 00:00:00.000',
      to: '2026-11-23 00:00:00.000',
      limit: 100,
    });
    await snapshot('created-by-day', compiled);
  });

  it('leaves out grouping, the zone and the business filter when the query needs none', async () => {
    const query = parseQuery({ metrics: ['tasks_created', 'tasks_completed'], period: 'today' });
    const period = resolveQueryPeriod(query.period, NOW, query.timezone);
    const compiled = compileQuery(query, { period, businesses: null, rowLimit: 5 });
    expect(compiled.params).toEqual({
      from: '2026-11-22 00:00:00.000',
      to: '2026-11-23 00:00:00.000',
      limit: 5,
    });
    await snapshot('created-and-completed-today-unrestricted', compiled);
  });

  it('defaults to last_30_days in UTC', () => {
    expect(parseQuery({ metrics: ['tasks_created'] })).toEqual({
      metrics: ['tasks_created'],
      dimensions: [],
      period: 'last_30_days',
      timezone: 'UTC',
      business: null,
      filters: [],
      orderBy: [],
      limit: null,
      offset: 0,
      compare: null,
      totals: false,
      weekStart: 'monday',
      fill: null,
    });
  });
});

describe('periods', () => {
  const iso = (name: Parameters<typeof resolvePeriod>[0], tz = 'UTC', now = NOW) => {
    const period = resolvePeriod(name, now, tz);
    return [period.from.toISOString(), period.to.toISOString()];
  };

  it('resolves each name to half-open whole days in UTC', () => {
    // 2026-11-22 is a Sunday.
    expect(iso('today')).toEqual(['2026-11-22T00:00:00.000Z', '2026-11-23T00:00:00.000Z']);
    expect(iso('yesterday')).toEqual(['2026-11-21T00:00:00.000Z', '2026-11-22T00:00:00.000Z']);
    expect(iso('last_7_days')).toEqual(['2026-11-16T00:00:00.000Z', '2026-11-23T00:00:00.000Z']);
    expect(iso('last_30_days')).toEqual(['2026-10-24T00:00:00.000Z', '2026-11-23T00:00:00.000Z']);
    expect(iso('last_90_days')).toEqual(['2026-08-25T00:00:00.000Z', '2026-11-23T00:00:00.000Z']);
    expect(iso('this_week')).toEqual(['2026-11-16T00:00:00.000Z', '2026-11-23T00:00:00.000Z']);
    expect(iso('last_week')).toEqual(['2026-11-09T00:00:00.000Z', '2026-11-16T00:00:00.000Z']);
    expect(iso('this_month')).toEqual(['2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z']);
    expect(iso('last_month')).toEqual(['2026-10-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z']);
    expect(iso('this_quarter')).toEqual(['2026-10-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z']);
    expect(iso('this_year')).toEqual(['2026-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z']);
    expect(iso('last_quarter')).toEqual(['2026-07-01T00:00:00.000Z', '2026-10-01T00:00:00.000Z']);
    expect(iso('last_year')).toEqual(['2025-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z']);
    expect(iso('last_12_months')).toEqual(['2025-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z']);
    expect(iso('all_time')).toEqual(['1970-01-01T00:00:00.000Z', '2026-11-23T00:00:00.000Z']);
  });

  it('starts weeks on Sunday when asked: today, a Sunday, is the first day of this week', () => {
    const sunday = (name: 'this_week' | 'last_week') => {
      const period = resolvePeriod(name, NOW, 'UTC', 'sunday');
      return [period.from.toISOString(), period.to.toISOString()];
    };
    expect(sunday('this_week')).toEqual(['2026-11-22T00:00:00.000Z', '2026-11-29T00:00:00.000Z']);
    expect(sunday('last_week')).toEqual(['2026-11-15T00:00:00.000Z', '2026-11-22T00:00:00.000Z']);
  });

  it('follows local midnight in the request time zone', () => {
    // 15:30Z is already the 23rd in Tokyo, still the 22nd in Los Angeles.
    expect(iso('today', 'Asia/Tokyo')).toEqual([
      '2026-11-22T15:00:00.000Z',
      '2026-11-23T15:00:00.000Z',
    ]);
    expect(iso('today', 'America/Los_Angeles')).toEqual([
      '2026-11-22T08:00:00.000Z',
      '2026-11-23T08:00:00.000Z',
    ]);
  });

  it('keeps day boundaries at local midnight across DST changes', () => {
    // Europe/Paris leaves summer time on 2026-10-25: that day lasts 25 hours.
    const now = new Date('2026-10-25T12:00:00Z');
    expect(iso('today', 'Europe/Paris', now)).toEqual([
      '2026-10-24T22:00:00.000Z',
      '2026-10-25T23:00:00.000Z',
    ]);
    expect(iso('last_7_days', 'Europe/Paris', now)).toEqual([
      '2026-10-18T22:00:00.000Z',
      '2026-10-25T23:00:00.000Z',
    ]);
    // America/Santiago skips midnight when summer time starts (2026-09-06): the day starts at 01:00.
    const santiago = resolvePeriod('today', new Date('2026-09-06T12:00:00Z'), 'America/Santiago');
    expect(santiago.from.toISOString()).toBe('2026-09-06T04:00:00.000Z');
  });
});
