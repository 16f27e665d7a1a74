import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Kysely } from 'kysely';
import { AppError } from '../platform/errors.ts';
import { projectionFreshness } from '../projection/freshness.ts';
import type { Database } from '../storage/database.ts';
import { stateBuckets } from './buckets.ts';
import { DIMENSIONS, METRICS } from './catalog.ts';
import { type ResolvedPeriod, resolvePeriod } from './period.ts';
import { type CompiledQuery, compileQuery, TOTAL_ROWS_COLUMN } from './query-compiler.ts';
import {
  describeColumns,
  type QueryWarning,
  queryWarnings,
  resolvedQuery,
} from './query-metadata.ts';
import { type AnalyticsQuery, parseQuery, type QueryRequest } from './query-parser.ts';

export interface AnalyticsDeps {
  clickhouse: ClickHouseClient;
  db: Kysely<Database>;
  now: () => Date;
  maxRows: number;
  timeoutMs: number;
  staleAfterMs: number;
}

export interface QueryResponse {
  data: Record<string, unknown>[];
  metadata: Record<string, unknown>;
  warnings?: QueryWarning[];
}

export interface QueryContext {
  signal: AbortSignal;
  /** Businesses the caller may read; null means no restriction. */
  businesses: string[] | null;
}

interface JsonResult {
  data: Record<string, unknown>[];
  statistics?: { elapsed: number; rows_read: number; bytes_read: number };
}

export async function runQuery(
  deps: AnalyticsDeps,
  request: QueryRequest,
  ctx: QueryContext,
): Promise<QueryResponse> {
  const started = performance.now();
  const now = deps.now();
  const { query, period, compiled } = await prepareQuery(deps, request, ctx.businesses, now);
  const queryId = randomUUID();

  const [result, freshness] = await Promise.all([
    deps.clickhouse.query({
      query: compiled.sql,
      query_params: compiled.params,
      query_id: queryId,
      format: 'JSON',
      abort_signal: ctx.signal,
      clickhouse_settings: {
        // 'break' returns what was computed when the budget runs out; it is flagged below.
        max_execution_time: deps.timeoutMs / 1000,
        timeout_overflow_mode: 'break',
        // A server stops the query when our aborted request closes its connection.
        cancel_http_readonly_queries_on_client_close: 1,
      },
    }),
    projectionFreshness(deps.db, now),
  ]);
  const json = (await result.json<Record<string, unknown>>()) as unknown as JsonResult;
  const totalRows = Number(json.data[0]?.[TOTAL_ROWS_COLUMN] ?? 0);
  const data = json.data.map(({ [TOTAL_ROWS_COLUMN]: _, ...row }) => row);
  const warnings = queryWarnings({
    query,
    period,
    rowCount: data.length,
    totalRows,
    capped: query.limit === null && totalRows > data.length,
    engineElapsedMs: (json.statistics?.elapsed ?? 0) * 1000,
    timeoutMs: deps.timeoutMs,
    freshness,
    staleAfterMs: deps.staleAfterMs,
  });

  return {
    data,
    metadata: {
      query: resolvedQuery(query, period),
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

export interface PreparedQuery {
  query: AnalyticsQuery;
  period: ResolvedPeriod;
  compiled: CompiledQuery;
}

/** Request → checked query → resolved period → one statement; also what the benchmark runs. */
export async function prepareQuery(
  deps: AnalyticsDeps,
  request: QueryRequest,
  allowed: string[] | null,
  now: Date,
): Promise<PreparedQuery> {
  const query = parseQuery(request, { maxRows: deps.maxRows });
  if (query.business !== null && allowed !== null && !allowed.includes(query.business)) {
    // Answered exactly like a business that does not exist.
    throw new AppError('not_found', `Business ${query.business} does not exist.`);
  }
  const businesses = query.business !== null ? [query.business] : allowed;
  const period = resolvePeriod(query.period, now, query.timezone);
  const rowLimit = query.limit ?? deps.maxRows;
  const buckets = query.metrics.some((name) => METRICS[name].source === 'state')
    ? stateBuckets(
        period,
        timeDimension(query),
        now,
        await firstFact(deps, query, period, businesses),
      )
    : undefined;
  return {
    query,
    period,
    compiled: compileQuery(query, { period, businesses, rowLimit, buckets }),
  };
}

const timeDimension = (query: AnalyticsQuery) =>
  query.dimensions.find((name) => DIMENSIONS[name].time);

/** Where an all_time bucket list starts: only that case needs a look at the data. */
async function firstFact(
  deps: AnalyticsDeps,
  query: AnalyticsQuery,
  period: ResolvedPeriod,
  businesses: string[] | null,
): Promise<Date | null> {
  if (period.name !== 'all_time' || !timeDimension(query)) return null;
  const scope = businesses === null ? '' : 'WHERE business IN {businesses:Array(String)}';
  const result = await deps.clickhouse.query({
    query: `SELECT toString(min(occurred_at)) AS first, count() AS facts FROM facts ${scope}`,
    query_params: businesses === null ? {} : { businesses },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ first: string; facts: number }>();
  if (!row || Number(row.facts) === 0) return null;
  return new Date(`${row.first.replace(' ', 'T')}Z`);
}
