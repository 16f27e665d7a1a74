import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIMENSIONS } from '../../libs/analytics/catalog/catalog.ts';
import { compileQuery } from '../../libs/analytics/compile/query-compiler.ts';
import { flowSource } from '../../libs/analytics/compile/sql/flow-source.ts';
import { cte, inlineSelect, selectLines } from '../../libs/analytics/compile/sql/select-clauses.ts';
import type { SourceContext } from '../../libs/analytics/compile/sql/source-context.ts';
import {
  alias,
  and,
  ident,
  idents,
  join,
  or,
  param,
  raw,
  render,
  type SqlValue,
  sql,
} from '../../libs/analytics/compile/sql/sql-value.ts';
import { stateSource } from '../../libs/analytics/compile/sql/state-select.ts';
import { parseQuery, type QueryRequest } from '../../libs/analytics/parse/query-parser.ts';
import { stateBuckets, timeBuckets } from '../../libs/analytics/period/buckets.ts';
import { resolveQueryPeriod } from '../../libs/analytics/period/date-range.ts';
import type { SourceName } from '../../libs/analytics/sources/rollups.ts';
import { type ClickHouse, openClickHouse } from '../../libs/storage/clickhouse.ts';
import { tempDir } from '../support/engines.ts';

const T = "DateTime64(3, 'UTC')";
const HOSTILE = "x' OR 1=1 --";

describe('typed SQL values', () => {
  it('render text written in code, checked names and placeholders, and list each placeholder', () => {
    const to = param('to', T);
    const value = sql`SELECT ${idents(['task_gid', 'kind'])} FROM ${ident('facts')} WHERE ${and([
      sql`occurred_at < ${to}`,
      null,
      sql`kind = ${param('kind', 'String')}`,
      sql`occurred_at >= ${to} - 1`,
    ])}`;
    expect(render(value)).toEqual({
      sql: `SELECT task_gid, kind FROM facts WHERE occurred_at < {to:${T}} AND kind = {kind:String} AND occurred_at >= {to:${T}} - 1`,
      parameters: { to: T, kind: 'String' },
    });
    expect(render(or([raw('a'), null, raw('b')])).sql).toBe('a OR b');
    expect(render(alias(raw('sum(x)'), 'total')).sql).toBe('sum(x) AS total');
    expect(render(join([])).sql).toBe('');
  });

  it('take a value only as a placeholder: a hole refuses strings and numbers', () => {
    const hole = sql as unknown as (s: TemplateStringsArray, ...v: unknown[]) => SqlValue;
    expect(() => hole`kind = ${HOSTILE}`).toThrow(TypeError);
    expect(() => hole`n = ${42}`).toThrow(TypeError);
    expect(() => hole`n = ${null}`).toThrow(TypeError);
    expect(() => hole`n = ${{ kind: 'value', value: HOSTILE }}`).toThrow(TypeError);
  });

  it('refuse names and types that are not plain, and one name bound with two types', () => {
    expect(() => ident('project; DROP TABLE facts')).toThrow(TypeError);
    expect(() => ident('a b')).toThrow(TypeError);
    expect(() => ident('')).toThrow(TypeError);
    expect(() => param('v}', 'String')).toThrow(TypeError);
    expect(() => param('v', 'String} OR 1=1 --' as 'String')).toThrow(TypeError);
    expect(() => render(sql`${param('v', 'String')} = ${param('v', 'UInt32')}`)).toThrow(
      /both String and UInt32/,
    );
  });

  it('compose a select clause by clause, leaving out the clauses it has not', () => {
    const select = {
      distinct: true,
      columns: [ident('j'), raw('sum(sign) AS weight')],
      from: ident('facts'),
      arrayJoin: raw('range(1, 3) AS k'),
      where: [null, sql`slot < ${param('state_to', T)}`],
      groupBy: [ident('j')],
      having: raw('weight != 0'),
    };
    expect(render(selectLines(select)).sql).toBe(
      [
        'SELECT DISTINCT j, sum(sign) AS weight',
        'FROM facts',
        'ARRAY JOIN range(1, 3) AS k',
        `WHERE slot < {state_to:${T}}`,
        'GROUP BY j',
        'HAVING weight != 0',
      ].join('\n'),
    );
    expect(
      render(cte('t', { columns: [ident('j')], from: ident('facts'), where: [null] })).sql,
    ).toBe('t AS (SELECT j FROM facts)');
    expect(
      render(inlineSelect({ columns: [ident('j')], from: ident('facts'), groupBy: [] })).sql,
    ).toBe('SELECT j FROM facts');
  });

  it('give each source its placeholders with their types: filter values as f0, f1, …', () => {
    const ctx: SourceContext = {
      dimensions: ['day', 'project'],
      metrics: ['tasks_created', 'open_tasks'],
      filters: [
        { dimension: 'project', op: 'eq', values: [HOSTILE] },
        { dimension: 'status', op: 'not_in', values: [HOSTILE, 'done'] },
      ],
      scope: null,
      union: true,
      source: 'facts',
      instants: 3,
      weekStart: 'monday',
    };
    // The day's `{tz:String}` comes from the catalog's text and is named as a parameter too.
    expect(render(selectLines(flowSource(ctx))).parameters).toEqual({
      tz: 'String',
      from: T,
      to: T,
      f0: 'String',
      f1: 'Array(String)',
    });
    expect(render(selectLines(stateSource(ctx))).parameters).toEqual({
      tz: 'String',
      f0: 'String',
      f1: 'Array(String)',
    });
  });
});

// 2026-11-22 is a Sunday.
const NOW = new Date('2026-11-22T15:30:00Z');

function compile(request: QueryRequest, source: SourceName) {
  const query = parseQuery(request);
  const period = resolveQueryPeriod(query.period, NOW, query.timezone);
  const time = query.dimensions.find((name) => DIMENSIONS[name].time);
  const buckets = stateBuckets(period, time ? timeBuckets(period, time, null) : null, NOW);
  return compileQuery(query, {
    period,
    businesses: [HOSTILE],
    rowLimit: 100,
    buckets,
    source,
  });
}

describe('compiled metric sources', () => {
  const shapes: Array<[SourceName, QueryRequest]> = [
    [
      'facts',
      {
        metrics: ['completion_rate', 'blocked_tasks', 'overdue_tasks'],
        dimensions: ['week', 'assignee'],
        period: 'last_30_days',
        filters: [{ dimension: 'assignee', op: 'in', values: [HOSTILE, null] }],
      },
    ],
    [
      'facts',
      {
        metrics: ['open_tasks', 'tasks_created'],
        dimensions: ['project'],
        period: 'this_month',
        filters: [{ dimension: 'project', op: 'neq', values: [HOSTILE] }],
      },
    ],
    [
      'rollup_projects_blocked_day',
      {
        metrics: ['completion_rate', 'blocked_tasks', 'overdue_tasks'],
        dimensions: ['day', 'project'],
        period: 'last_7_days',
        filters: [{ dimension: 'project', op: 'eq', values: [HOSTILE] }],
      },
    ],
    [
      'rollup_labels_all',
      {
        metrics: ['open_tasks', 'overdue_tasks'],
        dimensions: ['status'],
        period: 'all_time',
        filters: [{ dimension: 'status', op: 'not_in', values: [HOSTILE] }],
      },
    ],
  ];

  it.each(shapes)('on %s bind every value and inline none', (source, request) => {
    const { sql: text, params } = compile(request, source);
    expect(text).not.toContain(HOSTILE);
    expect(text).not.toContain('x\\');
    expect(JSON.stringify(params)).toContain(JSON.stringify(HOSTILE));
    // Each placeholder the text holds has its value, and no value goes unused.
    const named = new Set([...text.matchAll(/\{(\w+):/g)].map((match) => match[1]));
    expect(new Set(Object.keys(params))).toEqual(named);
  });
});

describe('a rendered value on the engine', () => {
  let ch: ClickHouse;
  beforeAll(async () => {
    ch = await openClickHouse({
      url: process.env.CLICKHOUSE_URL,
      dataDir: `${await tempDir()}/ch`,
    });
  });
  afterAll(async () => ch.close());

  it('compares with the bound value as data, whatever it holds', async () => {
    const { sql: query } = render(
      sql`SELECT count() AS n, any(${param('v', 'String')}) AS v FROM numbers(3) WHERE ${and([
        sql`toString(number) != ${param('v', 'String')}`,
        sql`toString(number) IN ${param('keep', 'Array(String)')}`,
      ])}`,
    );
    const result = await ch.client.query({
      query,
      query_params: { v: HOSTILE, keep: ['0', '2'] },
      format: 'JSONEachRow',
    });
    expect(await result.json()).toEqual([{ n: 2, v: HOSTILE }]);
  });
});
