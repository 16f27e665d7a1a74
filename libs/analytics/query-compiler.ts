import type { StateBuckets } from './buckets.ts';
import { METRICS } from './catalog.ts';
import { commonTables, flowSelect, type SourceContext, stateSelect } from './metric-sources.ts';
import type { ResolvedPeriod } from './period.ts';
import type { AnalyticsQuery } from './query-parser.ts';

/** A compiled statement is plain data: SQL text with `{name:Type}` placeholders, and values. */
export interface CompiledQuery {
  sql: string;
  params: Record<string, unknown>;
}

export interface CompileOptions {
  period: ResolvedPeriod;
  /** Businesses the caller may read; null means no restriction. */
  businesses: string[] | null;
  /** Rows to return at most (the caller's limit or the server's cap). */
  rowLimit: number;
  /** Where state metrics are measured; needed only when the query asks for one. */
  buckets?: StateBuckets;
}

export const TOTAL_ROWS_COLUMN = '__total_rows';

/**
 * One statement per query. Flow metrics aggregate facts inside the period; state metrics
 * aggregate task states at bucket ends. When both are asked for, each source fills the other's
 * columns with neutral values and an outer GROUP BY merges them row by row (max of a value and
 * its neutral is the value). The window count runs after grouping, before LIMIT: total rows.
 */
export function compileQuery(query: AnalyticsQuery, options: CompileOptions): CompiledQuery {
  const sources = new Set(query.metrics.map((name) => METRICS[name].source));
  const ctx: SourceContext = {
    dimensions: query.dimensions,
    metrics: query.metrics,
    filters: query.filters,
    scope: options.businesses === null ? null : 'business IN {businesses:Array(String)}',
    union: sources.size > 1,
  };
  const tables = commonTables(ctx);
  const lines = tables.length > 0 ? [`WITH ${tables.join(',\n')}`] : [];
  const total = `count() OVER () AS ${TOTAL_ROWS_COLUMN}`;
  if (ctx.union) {
    const merged = query.metrics.map((name) => `max(${name}) AS ${name}`);
    lines.push(
      `SELECT ${[...query.dimensions, ...merged, total].join(', ')}`,
      'FROM (',
      ...flowSelect(ctx),
      'UNION ALL',
      ...stateSelect(ctx),
      ')',
    );
    if (query.dimensions.length > 0) lines.push(`GROUP BY ${query.dimensions.join(', ')}`);
  } else {
    const select = sources.has('flow') ? flowSelect(ctx) : stateSelect(ctx);
    lines.push(`${select[0]}, ${total}`, ...select.slice(1));
  }
  const order = orderTerms(query);
  if (order.length > 0) lines.push(`ORDER BY ${order.join(', ')}`);
  lines.push('LIMIT {limit:UInt32}');
  const sql = lines.join('\n');
  return { sql, params: bindParams(sql, query, options) };
}

/** The caller's order first, then every dimension not yet named, so pages are stable. */
function orderTerms(query: AnalyticsQuery): string[] {
  const named = new Set<string>(query.orderBy.map((order) => order.field));
  return [
    ...query.orderBy.map((order) => `${order.field} ${order.direction.toUpperCase()}`),
    ...query.dimensions.filter((name) => !named.has(name)).map((name) => `${name} ASC`),
  ];
}

function bindParams(
  sql: string,
  query: AnalyticsQuery,
  options: CompileOptions,
): Record<string, unknown> {
  const params: Record<string, unknown> = {
    tz: options.period.timezone,
    from: toClickHouseTime(options.period.from),
    to: toClickHouseTime(options.period.to),
  };
  if (options.businesses !== null) params.businesses = options.businesses;
  if (options.buckets) {
    const ats = options.buckets.ats;
    params.starts = options.buckets.starts.map(toClickHouseTime);
    params.ats = ats.map(toClickHouseTime);
    params.state_to = toClickHouseTime(new Date(Math.max(0, ...ats.map((at) => at.getTime()))));
  }
  query.filters.forEach((filter, i) => {
    params[`f${i}`] = filter.op === 'eq' || filter.op === 'neq' ? filter.values[0] : filter.values;
  });
  params.limit = options.rowLimit;
  // Bind only what the text uses: engines reject parameters a statement does not mention.
  for (const name of Object.keys(params)) {
    if (!sql.includes(`{${name}:`)) delete params[name];
  }
  return params;
}

/** Parameter text for `DateTime64(3, 'UTC')`. */
export function toClickHouseTime(instant: Date): string {
  return instant.toISOString().replace('T', ' ').replace('Z', '');
}
