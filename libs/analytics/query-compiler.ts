import { DIMENSIONS, METRICS } from './catalog.ts';
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
  /** Rows to return at most; one more is asked for so a cut can be reported. */
  maxRows: number;
}

export const TOTAL_ROWS_COLUMN = '__total_rows';

export function compileQuery(query: AnalyticsQuery, options: CompileOptions): CompiledQuery {
  const dimensions = query.dimensions.map((name) => `${DIMENSIONS[name].sql} AS ${name}`);
  const metrics = query.metrics.map((name) => `${METRICS[name].sql} AS ${name}`);
  const where = [
    "occurred_at >= {from:DateTime64(3, 'UTC')}",
    "occurred_at < {to:DateTime64(3, 'UTC')}",
  ];
  const params: Record<string, unknown> = {
    tz: options.period.timezone,
    from: toClickHouseTime(options.period.from),
    to: toClickHouseTime(options.period.to),
    limit: options.maxRows,
  };
  if (options.businesses !== null) {
    where.unshift('business IN {businesses:Array(String)}');
    params.businesses = options.businesses;
  }
  const lines = [
    `SELECT ${[...dimensions, ...metrics, `count() OVER () AS ${TOTAL_ROWS_COLUMN}`].join(', ')}`,
    'FROM facts',
    `WHERE ${where.join(' AND ')}`,
  ];
  if (query.dimensions.length > 0) {
    lines.push(`GROUP BY ${query.dimensions.join(', ')}`);
    lines.push(`ORDER BY ${query.dimensions.join(', ')}`);
  }
  lines.push('LIMIT {limit:UInt32}');
  const sql = lines.join('\n');
  // Bind the zone only where an expression uses it: engines reject unused parameters.
  if (!sql.includes('{tz:String}')) delete params.tz;
  return { sql, params };
}

/** Parameter text for `DateTime64(3, 'UTC')`. */
export function toClickHouseTime(instant: Date): string {
  return instant.toISOString().replace('T', ' ').replace('Z', '');
}
