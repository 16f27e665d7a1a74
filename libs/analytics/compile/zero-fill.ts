import { DIMENSIONS, METRICS } from '../catalog/catalog.ts';
import type { AnalyticsQuery } from '../parse/query-parser.ts';
import { FILL, FILL_STARTED } from './sql/query-params.ts';
import { alias, catalogSql, ident, idents, join, type SqlValue, sql } from './sql/sql-value.ts';

/** The time buckets `fill: "zero"` gives every label combination, in order. */
export interface FillGrid {
  /** Each bucket's label, as the time dimension's SQL names it. */
  labels: string[];
  /** How many of the first buckets have begun: state metrics are null in the rest. */
  started: number;
}

/** What the rows statement is named inside the filled one. */
const FOUND = ident('rows_found');

/**
 * The rows statement's select (`inner`), with every label combination it answers
 * given every bucket of the grid: a CTE of the rows, joined by UNION ALL to each combination ×
 * each bucket holding the metrics' neutrals, merged by GROUP BY. A row found keeps its values
 * (max of a value and its neutral is the value: counts are never below 0, and NULL is ignored);
 * a bucket without one reads the neutrals. Ordering and LIMIT apply to the filled rows, so
 * paging and the engine's count of rows before LIMIT include them.
 *
 *     rows_found AS (<inner>)
 *     SELECT project, week, max(tasks_created) AS tasks_created FROM (
 *       SELECT project, week, tasks_created FROM rows_found
 *       UNION ALL
 *       SELECT project, week, 0 AS tasks_created FROM (SELECT DISTINCT project FROM rows_found)
 *       ARRAY JOIN {fill:Array(String)} AS week, arrayEnumerate({fill:Array(String)}) AS fill_index)
 *     GROUP BY project, week
 *
 * Returns the CTE (to join the statement's WITH list) and the select's lines.
 */
export function zeroFilled(
  query: AnalyticsQuery,
  inner: SqlValue,
): { table: SqlValue; lines: SqlValue[] } {
  const time = ident(query.dimensions.find((name) => DIMENSIONS[name].time) as string);
  const labels = idents(query.dimensions.filter((name) => !DIMENSIONS[name].time));
  const dimensions = query.dimensions.map(ident);
  const columns = idents([...query.dimensions, ...query.metrics]);
  const neutrals = query.metrics.map((name) => {
    const metric = METRICS[name];
    // A state is not read in a bucket not begun: null there, as in a series.
    const neutral =
      metric.source === 'state' && metric.neutral === '0'
        ? sql`if(fill_index > ${FILL_STARTED}, NULL, 0)`
        : catalogSql(metric.neutral);
    return alias(neutral, name);
  });
  const merged = query.metrics.map((name) => alias(sql`max(${ident(name)})`, name));
  return {
    table: sql`${FOUND} AS (\n${inner}\n)`,
    lines: [
      sql`SELECT ${join([...dimensions, ...merged])}`,
      sql`FROM (`,
      sql`SELECT ${columns} FROM ${FOUND}`,
      sql`UNION ALL`,
      sql`SELECT ${join([...dimensions, ...neutrals])} FROM (SELECT DISTINCT ${labels} FROM ${FOUND})`,
      sql`ARRAY JOIN ${FILL} AS ${time}, arrayEnumerate(${FILL}) AS fill_index`,
      sql`)`,
      sql`GROUP BY ${join(dimensions)}`,
    ],
  };
}
