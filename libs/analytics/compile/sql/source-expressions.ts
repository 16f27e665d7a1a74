import { DIMENSIONS, type DimensionName, METRICS, type MetricName } from '../../catalog/catalog.ts';
import { FILTER_OPERATORS } from '../../catalog/filter-ops.ts';
import { type FilterCondition, foldFilters, type QueryFilter } from '../../parse/query-filters.ts';
import type { WeekStart } from '../../period/period.ts';
import { ATS, filterValues, STARTS } from './query-params.ts';
import { onRollup, type SourceContext } from './source-context.ts';
import { alias, catalogSql, ident, or, raw, type SqlValue, sql } from './sql-value.ts';

/*
 * One clause per dimension, filter and metric, each taken from the catalog: the only place
 * analytics SQL names and expressions come from.
 */

/** A dimension of the row at `instant`: `project`, `toString(toDate(slot, {tz:String})) AS day`. */
export function dimensionColumn(
  name: DimensionName,
  instant: string,
  weekStart: WeekStart,
): SqlValue {
  const expression = DIMENSIONS[name].sql(instant, weekStart);
  return expression === name ? ident(name) : alias(catalogSql(expression), name);
}

export const dimensionColumns = (ctx: SourceContext, instant: string): SqlValue[] =>
  ctx.dimensions.map((name) => dimensionColumn(name, instant, ctx.weekStart));

/** A dimension's value at `instant`, to compare: `toString(toDate(done, {tz:String}))`. */
export const dimensionAt = (name: DimensionName, instant: string, weekStart: WeekStart): SqlValue =>
  catalogSql(DIMENSIONS[name].sql(instant, weekStart));

/**
 * A condition, bound as `f{i}`: `project = {f0:String}`, `status NOT IN {f1:Array(String)}`,
 * `NOT multiSearchAnyCaseInsensitiveUTF8(assignee, {f2:Array(String)})` (part of the label, in
 * any case; the empty label of a row without one holds no value's text).
 */
export function filterCondition(
  filter: FilterCondition,
  i: number,
  instant: string,
  weekStart: WeekStart,
): SqlValue {
  const operator = FILTER_OPERATORS[filter.op];
  const column = dimensionAt(filter.dimension, instant, weekStart);
  const values = filterValues(i, filter.op);
  if (!operator.substring) return sql`${column} ${raw(operator.sql)} ${values}`;
  const found = sql`${raw(operator.sql)}(${column}, ${values})`;
  return operator.negated ? sql`NOT ${found}` : found;
}

/**
 * Each top-level filter's condition; a group is its elements' conditions joined by OR, in
 * parentheses. Conditions are numbered in pre-order, as the compiler binds their values.
 */
export const filterConditions = (
  filters: QueryFilter[],
  instant: string,
  weekStart: WeekStart,
): SqlValue[] =>
  foldFilters(
    filters,
    (condition, i) => filterCondition(condition, i, instant, weekStart),
    (elements) => sql`(${or(elements)})`,
  );

/**
 * A metric as `source` computes it, `countIf(kind = 'task_created') AS tasks_created` (facts)
 * or `sum(created) AS tasks_created` (a rollup); its neutral, `0 AS tasks_created`, where
 * another source of the same statement computes it.
 */
export function metricColumn(
  ctx: SourceContext,
  name: MetricName,
  source: 'flow' | 'state',
): SqlValue {
  const metric = METRICS[name];
  if (metric.source !== source) return alias(catalogSql(metric.neutral), name);
  const text = onRollup(ctx) ? metric.sql.rollup : metric.sql.facts;
  // The source decider sends a metric without a rollup form to facts only.
  if (text === null) throw new Error(`${name} is not kept by ${ctx.source}`);
  return alias(catalogSql(text), name);
}

/** Each requested metric of `source`, and in a union every other one as its neutral. */
export const metricColumns = (ctx: SourceContext, source: 'flow' | 'state'): SqlValue[] =>
  ctx.metrics
    .filter((name) => ctx.union || METRICS[name].source === source)
    .map((name) => metricColumn(ctx, name, source));

/** `GROUP BY`'s terms: the dimensions by name. */
export const groupTerms = (ctx: SourceContext): SqlValue[] => ctx.dimensions.map(ident);

/**
 * The bucket a row stands for, by its index in the bound arrays:
 * `{starts:Array(…)}[i] AS bucket, {ats:Array(…)}[i] AS at`.
 */
export const bucketColumns = (index: string): SqlValue[] => [
  alias(sql`${STARTS}[${raw(index)}]`, 'bucket'),
  alias(sql`${ATS}[${raw(index)}]`, 'at'),
];
