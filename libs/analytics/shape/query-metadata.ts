import { DIMENSIONS, METRICS } from '../catalog/catalog.ts';
import type { AnalyticsQuery } from '../parse/query-parser.ts';
import type { ResolvedPeriod } from '../period/period.ts';
import type { Freshness } from './answer-freshness.ts';

export interface QueryWarning {
  code: 'result_truncated' | 'partial_result' | 'stale_data';
  message: string;
  [member: string]: unknown;
}

export interface RunFacts {
  query: AnalyticsQuery;
  period: ResolvedPeriod;
  rowCount: number;
  totalRows: number;
  /** The server cap cut the rows (a caller's own `limit` never earns a warning). */
  capped: boolean;
  /** A statement stopped at the query's time budget (`QueryRun`). */
  partial: boolean;
  timeoutMs: number;
  freshness: Freshness;
  staleAfterMs: number;
}

/** Tells the caller plainly when the answer is cut short, incomplete or behind. */
export function queryWarnings(run: RunFacts): QueryWarning[] {
  const warnings: QueryWarning[] = [];
  if (run.capped) {
    warnings.push({
      code: 'result_truncated',
      message: `Only ${run.rowCount} of ${run.totalRows} rows are returned, from offset ${run.query.offset}; page with offset and limit, or narrow the query.`,
      returned_rows: run.rowCount,
      total_rows: run.totalRows,
    });
  }
  if (run.partial) {
    warnings.push({
      code: 'partial_result',
      message: `The query reached its ${run.timeoutMs} ms time budget; the numbers may cover only the data read so far.`,
      timeout_ms: run.timeoutMs,
    });
  }
  if (run.freshness.lagMs > run.staleAfterMs) {
    warnings.push({
      code: 'stale_data',
      message: `Facts from the last ${Math.ceil(run.freshness.lagMs / 1000)} s are not yet included.`,
      lag_ms: run.freshness.lagMs,
    });
  }
  return warnings;
}

export function resolvedQuery(query: AnalyticsQuery, period: ResolvedPeriod) {
  return {
    metrics: query.metrics,
    dimensions: query.dimensions,
    period: {
      name: period.name,
      from: period.from.toISOString(),
      to: period.to.toISOString(),
      timezone: period.timezone,
    },
    business: query.business,
    filters: query.filters,
    order_by: query.orderBy,
    limit: query.limit,
    offset: query.offset,
    compare: query.compare,
    include: query.totals ? ['totals'] : [],
  };
}

export function describeColumns(query: AnalyticsQuery) {
  return [
    ...query.dimensions.map((name) => ({
      name,
      kind: 'dimension',
      type: DIMENSIONS[name].type,
      unit: null,
      description: DIMENSIONS[name].description,
    })),
    ...query.metrics.map((name) => ({
      name,
      kind: 'metric',
      type: METRICS[name].type,
      unit: METRICS[name].unit,
      description: METRICS[name].description,
    })),
  ];
}
