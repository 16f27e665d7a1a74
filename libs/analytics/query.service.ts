import type { ClickHouseClient } from '@clickhouse/client';
import type { Kysely } from 'kysely';
import { projectionFreshness } from '../projection/freshness.ts';
import type { Database } from '../storage/database.ts';
import { DIMENSIONS, METRICS } from './catalog.ts';
import { resolvePeriod } from './period.ts';
import { compileQuery, TOTAL_ROWS_COLUMN } from './query-compiler.ts';
import { type AnalyticsQuery, parseQuery, type QueryRequest } from './query-parser.ts';

export interface AnalyticsDeps {
  clickhouse: ClickHouseClient;
  db: Kysely<Database>;
  now: () => Date;
  maxRows: number;
  timeoutMs: number;
  staleAfterMs: number;
}

export interface QueryWarning {
  code: 'result_truncated' | 'partial_result' | 'stale_data';
  message: string;
  [member: string]: unknown;
}

export interface QueryResponse {
  data: Record<string, unknown>[];
  metadata: Record<string, unknown>;
  warnings?: QueryWarning[];
}

interface JsonResult {
  data: Record<string, unknown>[];
  statistics?: { elapsed: number; rows_read: number; bytes_read: number };
}

export interface QueryContext {
  signal: AbortSignal;
  /** Businesses the caller may read; null means no restriction. */
  businesses: string[] | null;
}

export async function runQuery(
  deps: AnalyticsDeps,
  request: QueryRequest,
  ctx: QueryContext,
): Promise<QueryResponse> {
  const started = performance.now();
  const query = parseQuery(request);
  const now = deps.now();
  const period = resolvePeriod(query.period, now, query.timezone);
  const businesses = query.business !== null ? [query.business] : ctx.businesses;
  const compiled = compileQuery(query, { period, businesses, maxRows: deps.maxRows });

  const [result, freshness] = await Promise.all([
    deps.clickhouse.query({
      query: compiled.sql,
      query_params: compiled.params,
      format: 'JSON',
      abort_signal: ctx.signal,
      clickhouse_settings: {
        // 'break' returns what was computed when the budget runs out; it is flagged below.
        max_execution_time: deps.timeoutMs / 1000,
        timeout_overflow_mode: 'break',
      },
    }),
    projectionFreshness(deps.db, now),
  ]);
  const json = (await result.json<Record<string, unknown>>()) as unknown as JsonResult;
  const totalRows = Number(json.data[0]?.[TOTAL_ROWS_COLUMN] ?? 0);
  const data = json.data.map(({ [TOTAL_ROWS_COLUMN]: _, ...row }) => row);
  const elapsedSeconds = json.statistics?.elapsed ?? 0;

  const warnings: QueryWarning[] = [];
  if (totalRows > data.length) {
    warnings.push({
      code: 'result_truncated',
      message: `Only the first ${data.length} of ${totalRows} rows are returned.`,
      returned_rows: data.length,
      total_rows: totalRows,
    });
  }
  if (elapsedSeconds * 1000 >= deps.timeoutMs) {
    warnings.push({
      code: 'partial_result',
      message: `The query used its ${deps.timeoutMs} ms budget; numbers cover only the data read so far.`,
    });
  }
  if (freshness.lagMs > deps.staleAfterMs) {
    warnings.push({
      code: 'stale_data',
      message: `Facts from the last ${Math.round(freshness.lagMs / 1000)} s are not yet included.`,
      lag_ms: freshness.lagMs,
    });
  }

  return {
    data,
    metadata: {
      query: {
        metrics: query.metrics,
        dimensions: query.dimensions,
        period: {
          name: period.name,
          from: period.from.toISOString(),
          to: period.to.toISOString(),
          timezone: period.timezone,
        },
        business: query.business,
      },
      columns: describeColumns(query),
      row_count: data.length,
      total_rows: totalRows,
      elapsed_ms: Math.round((performance.now() - started) * 100) / 100,
      rows_read: Number(json.statistics?.rows_read ?? 0),
      bytes_read: Number(json.statistics?.bytes_read ?? 0),
      data_as_of: freshness.dataAsOf.toISOString(),
      query_id: result.query_id,
    },
    ...(warnings.length > 0 ? { warnings } : {}),
  };
}

function describeColumns(query: AnalyticsQuery) {
  return [
    ...query.dimensions.map((name) => ({
      name,
      kind: 'dimension',
      type: DIMENSIONS[name].type,
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
