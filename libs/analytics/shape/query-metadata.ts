import { DIMENSIONS, METRICS } from '../catalog/catalog.ts';
import type { Freshness } from '../execute/answer-freshness.ts';
import { namedLabels } from '../parse/query-filters.ts';
import type { AnalyticsQuery } from '../parse/query-parser.ts';
import type { ResolvedPeriod } from '../period/period.ts';
import { ianaTimezone } from '../period/time-zones.ts';

export interface QueryWarning {
  code: 'result_truncated' | 'partial_result' | 'stale_data' | 'unknown_filter_value';
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
  /**
   * What such a statement left unread: metrics of rows (or their comparison) that may be null
   * or cover only the facts read, and whether the totals may.
   */
  unread?: { metrics: readonly string[]; totals: boolean };
  timeoutMs: number;
  freshness: Freshness;
  staleAfterMs: number;
  /**
   * What `knownLabelsStatement` answered: the labels named by `eq`/`in` conditions that the
   * caller's businesses have had. Absent when it did not run (no such condition).
   */
  knownLabels?: ReadonlyArray<{ dimension: string; label: string }> | null;
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
      message: `The query reached its ${run.timeoutMs} ms time budget; the numbers may cover only the data read so far, and what it did not reach is null.`,
      timeout_ms: run.timeoutMs,
      metrics: [...(run.unread?.metrics ?? [])],
      totals: run.unread?.totals ?? false,
    });
  }
  if (run.freshness.lagMs > run.staleAfterMs) {
    warnings.push({
      code: 'stale_data',
      message: `Facts from the last ${Math.ceil(run.freshness.lagMs / 1000)} s are not yet included.`,
      lag_ms: run.freshness.lagMs,
    });
  }
  warnings.push(...unknownFilterValues(run));
  return warnings;
}

/**
 * An `eq`/`in` value naming a label the business never had most often is a typo or another
 * letter case (`Done` for `done`): its rows are missing from the answer without a word, so the
 * caller is told, once per dimension, which values matched no label at all.
 */
function unknownFilterValues(run: RunFacts): QueryWarning[] {
  if (!run.knownLabels) return [];
  const known = new Set(run.knownLabels.map((row) => `${row.dimension}\u0000${row.label}`));
  const warnings: QueryWarning[] = [];
  for (const [dimension, values] of namedLabels(run.query.filters)) {
    const unknown = values.filter((value) => !known.has(`${dimension}\u0000${value}`));
    if (unknown.length === 0) continue;
    warnings.push({
      code: 'unknown_filter_value',
      message: `No ${dimension} was ever named ${unknown.map((v) => `'${v}'`).join(', ')}: no row matches ${unknown.length === 1 ? 'it' : 'them'} (labels compare exactly, letter case included).`,
      dimension,
      values: unknown,
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
      timezone: ianaTimezone(period.timezone),
    },
    business: query.business,
    filters: query.filters,
    order_by: query.orderBy,
    limit: query.limit,
    offset: query.offset,
    compare: query.compare,
    include: query.totals ? ['totals'] : [],
    week_start: query.weekStart,
    fill: query.fill,
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
