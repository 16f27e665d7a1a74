import { describe, expect, it } from 'vitest';
import { countedRows } from '../../libs/analytics/compile/counted-rows.ts';
import { compileRows } from '../../libs/analytics/compile/query-compiler.ts';
import { withSettings } from '../../libs/analytics/compile/sql/select-clauses.ts';
import {
  catalogSql,
  ident,
  param,
  render,
  sql,
  wordsIn,
} from '../../libs/analytics/compile/sql/sql-value.ts';
import { parseQuery, type QueryRequest } from '../../libs/analytics/parse/query-parser.ts';
import { stateBuckets } from '../../libs/analytics/period/buckets.ts';
import { resolveQueryPeriod } from '../../libs/analytics/period/date-range.ts';

const NOW = new Date('2026-11-22T15:30:00Z');

function rowsOf(metrics: QueryRequest['metrics']) {
  const query = parseQuery({ metrics, dimensions: ['day'], period: 'last_7_days' });
  const period = resolveQueryPeriod(query.period, NOW, query.timezone);
  const buckets = stateBuckets(period, null, NOW);
  return compileRows(query, { period, businesses: ['acme'], rowLimit: 10, buckets });
}

describe('SQL kept as values to the engine', () => {
  it('keeps the placeholders of catalog text as parameters, the text as written', () => {
    const text = "formatDateTime(toDate(at, {tz:String}), '%F', {tz:String})";
    expect(render(catalogSql(text))).toEqual({ sql: text, parameters: { tz: 'String' } });
    expect(render(catalogSql('count()'))).toEqual({ sql: 'count()', parameters: {} });
    expect(() => catalogSql('toDate(at, {tz:Int8})')).toThrow(/not a parameter type/);
  });

  it('finds the words a statement holds in its pieces, whole words only', () => {
    const value = sql`SELECT ${ident('project')}, length(assignee) FROM facts WHERE x < ${param('to', 'String')}`;
    const words = wordsIn(value);
    for (const word of ['project', 'assignee', 'facts', 'to', 'String']) {
      expect(words.has(word)).toBe(true);
    }
    expect(words.has('proj')).toBe(false);
    expect(words.has('status')).toBe(false);
  });

  it('compiles rows with their structure beside the text, binding what the text names', () => {
    const rows = rowsOf(['blocked_tasks', 'tasks_created']);
    expect(rows.settings.map((piece) => render(piece).sql)).toEqual([
      "join_algorithm = 'partial_merge'",
    ]);
    const rendered = render(withSettings(rows.statement, rows.settings));
    expect(rows.sql).toBe(rendered.sql);
    expect(rows.sql.split('\n').at(-1)).toBe("SETTINGS join_algorithm = 'partial_merge'");
    expect(Object.keys(rows.params).sort()).toEqual(Object.keys(rendered.parameters).sort());
    expect(rows.params.tz).toBe('UTC');
  });

  it('wraps rows in their count with the settings still last and the same values', () => {
    const rows = rowsOf(['blocked_tasks']);
    const counted = countedRows(rows, 'total');
    const lines = counted.sql.split('\n');
    expect(lines[0]).toBe('SELECT *, count() OVER () AS total FROM (');
    expect(lines.at(-2)).toBe(')');
    expect(lines.at(-1)).toBe("SETTINGS join_algorithm = 'partial_merge'");
    expect(counted.sql).toContain(render(rows.statement).sql);
    expect(counted.params).toBe(rows.params);
    const plain = countedRows(rowsOf(['tasks_created']), 'total');
    expect(plain.sql.endsWith('\n)')).toBe(true);
    expect(() => countedRows(rows, 'total; DROP')).toThrow(/not an SQL identifier/);
  });
});
