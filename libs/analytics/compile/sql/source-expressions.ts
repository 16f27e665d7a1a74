import { DIMENSIONS, type DimensionName, METRICS, type MetricName } from '../../catalog/catalog.ts';
import { FILTER_OPERATORS } from '../../catalog/filter-ops.ts';
import type { QueryFilter } from '../../parse/query-parser.ts';
import { ATS, filterValues, STARTS } from './query-params.ts';
import { onRollup, type SourceContext } from './source-context.ts';
import { alias, ident, raw, type SqlValue, sql } from './sql-value.ts';

/*
 * One clause per dimension, filter and metric, each taken from the catalog: the only place
 * analytics SQL names and expressions come from.
 */

/** A dimension of the row at `instant`: `project`, `toString(toDate(slot, {tz:String})) AS day`. */
export function dimensionColumn(name: DimensionName, instant: string): SqlValue {
  const expression = DIMENSIONS[name].sql(instant);
  return expression === name ? ident(name) : alias(raw(expression), name);
}

export const dimensionColumns = (ctx: SourceContext, instant: string): SqlValue[] =>
  ctx.dimensions.map((name) => dimensionColumn(name, instant));

/** A dimension's value at `instant`, to compare: `toString(toDate(done, {tz:String}))`. */
export const dimensionAt = (name: DimensionName, instant: string): SqlValue =>
  raw(DIMENSIONS[name].sql(instant));

const operator = (filter: QueryFilter) => raw(FILTER_OPERATORS[filter.op].sql);

/**
 * The i-th filter: `project = {f0:String}`, `status NOT IN {f1:Array(String)}`. Its values
 * are bound by the compiler as `f{i}`, in the same order.
 */
export const filterCondition = (filter: QueryFilter, i: number, instant: string): SqlValue =>
  sql`${dimensionAt(filter.dimension, instant)} ${operator(filter)} ${filterValues(i, filter.op)}`;

export const filterConditions = (filters: QueryFilter[], instant: string): SqlValue[] =>
  filters.map((filter, i) => filterCondition(filter, i, instant));

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
  if (metric.source !== source) return alias(raw(metric.neutral), name);
  return alias(raw(onRollup(ctx) ? metric.sql.rollup : metric.sql.facts), name);
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
