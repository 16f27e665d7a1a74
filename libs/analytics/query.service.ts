import type { ClickHouseClient } from '@clickhouse/client';
import { businessScope } from '../auth/access.ts';
import { timeDimension } from './catalog/catalog.ts';
import { firstFactStatement } from './compile/fact-bounds.ts';
import type { Admission } from './execute/admission.ts';
import type { ChangeMark, Freshness, NewFacts } from './execute/answer-freshness.ts';
import {
  AnswerReuse,
  type Computed,
  type Kept,
  type Reading,
  type Reuse,
  sameFacts,
} from './execute/answer-reuse.ts';
import { holding } from './execute/kept-parts.ts';
import { cacheTags, QueryExecutor } from './execute/query-execution.ts';
import type { ExportGate } from './export-gate.ts';
import type { ExportSpool } from './export-spool.ts';
import { type AnalyticsQuery, parseQuery, type QueryRequest } from './parse/query-parser.ts';
import { resolveQueryPeriod } from './period/date-range.ts';
import type { ResolvedPeriod } from './period/period.ts';
import { planQuery, type QueryPlan } from './plan/query-plan.ts';
import { computeParts, type Held, type Parts, type PreparedQuery, pageOf } from './query-parts.ts';
import {
  describeColumns,
  type QueryWarning,
  queryWarnings,
  resolvedQuery,
} from './shape/query-metadata.ts';
import { attachComparison, incompleteFrom, unreadMetrics } from './shape/query-rows.ts';
import type { RollupName, SourceName } from './sources/rollups.ts';

/*
 * The analytics pipeline, one folder per stage. Each stage imports only the stages above it
 * in this list (`npm run cycles` checks the order); this service and the routes sit on top:
 *
 *   catalog/  metrics, dimensions, filter operators: the vocabulary every stage reads
 *   period/   named period or date range → half-open UTC bounds; time buckets, comparison period
 *   parse/    request → checked AnalyticsQuery (query-parser.ts)
 *   sources/  which table answers each statement exactly: a rollup or facts (source-decider.ts)
 *   compile/  statement → {sql, params}; SQL builders in compile/sql/; own-reads companions
 *   plan/     every statement one request runs, decided and compiled (query-plan.ts)
 *   execute/  admission, result cache, answer reuse, the engine (query-execution.ts)
 *   shape/    rows zero-filled, paged, compared (query-rows.ts); metadata and warnings
 *
 * A request goes parse → period → plan (which asks sources and compile) → execute → shape.
 */

export interface AnalyticsDeps {
  clickhouse: ClickHouseClient;
  /** How far the projection has got: the read side asks, it holds no database of its own. */
  freshness: (now: Date) => Promise<Freshness>;
  /**
   * What was projected between two readings for some businesses (null: cannot be told); without
   * it a kept answer is reused only while no fact is projected.
   */
  changes?: (
    from: ChangeMark,
    to: ChangeMark,
    businesses: string[] | null,
  ) => Promise<NewFacts | null>;
  /** Rollups that hold every fact; the planner answers from no other. */
  rollups: () => ReadonlySet<RollupName>;
  now: () => Date;
  maxRows: number;
  /** `CAIRN_EXPORT_MAX_ROWS`: the row cap of a CSV or NDJSON export; `maxRows` without it. */
  exportMaxRows?: number;
  timeoutMs: number;
  staleAfterMs: number;
  /** ClickHouse `max_memory_usage` per query; unset leaves the server's own limit. */
  maxMemoryBytes?: number;
  /** Result cache and fair admission around the engine; without it, statements run directly. */
  executor?: QueryExecutor;
  /** The executor's admission, which an export (streamed beside the executor) goes through too. */
  admission?: Admission;
  /** Where an export's output waits for its reader (memory only without it). */
  exportSpool?: ExportSpool;
  /** Each principal's downloads in progress, capped (no cap without it). */
  exportGate?: ExportGate;
  /** `CAIRN_CSV_FORMULA_ESCAPE`: CSV labels that would start a formula go behind a `'`. @defaultValue true */
  csvFormulaEscape?: boolean;
  /** Zones the running ClickHouse can load (loadClickHouseZones). */
  zones?: ReadonlySet<string>;
}

/** What planning a request reads: the all_time series' first fact, the rollups that are ready. */
export type PlanningDeps = Pick<
  AnalyticsDeps,
  'clickhouse' | 'rollups' | 'maxRows' | 'zones' | 'changes' | 'executor'
>;

export interface QueryResponse {
  data: Record<string, unknown>[];
  metadata: Record<string, unknown>;
  warnings?: QueryWarning[];
}

export interface QueryContext {
  signal: AbortSignal;
  /** Businesses the caller may read; null means no restriction. */
  businesses: string[] | null;
  /** Who is asking, for fair admission. */
  principal?: string;
  /** False for `Cache-Control: no-cache`. */
  useCache?: boolean;
  /**
   * Tests and benchmarks only (never set from a request): answer from this source instead of
   * the planner's first choice; it must be one the planner found exact.
   */
  source?: SourceName;
}

/**
 * The request's stages, in the order they run: what the read side holds now → parse, period
 * and plan → the statements' answers (kept ones that still hold, the rest run) → shaped rows
 * and metadata. Totals run beside the rows; a comparison needs the page's labels.
 */
export async function runQuery(
  deps: AnalyticsDeps,
  request: QueryRequest,
  ctx: QueryContext,
): Promise<QueryResponse> {
  const started = performance.now();
  const now = deps.now();
  // 1. Read before the engine runs, so the answer reflects at least the facts it names.
  const freshness = await deps.freshness(now);
  const reading: Reading = { watermark: freshness.watermark, changes: freshness.changes ?? null };
  // 2. Parse → period → plan (sources decided, statements compiled).
  const plan = await prepareQuery(deps, request, ctx.businesses, now, {
    force: ctx.source,
    reading,
  });
  // 3. Answers: reused where they hold, run through admission and the cache otherwise.
  const { parts, reuse } = await answerParts(deps, plan, ctx, { now, reading });
  // 4. Shape: zero-fill, page, compare, describe.
  return shapeAnswer(deps, plan, parts, { now, started, freshness, reuse });
}

/**
 * The plan's statements answered: a kept answer's parts that still hold are reused, the rest
 * run under one admission and one time budget. Callers asking the same at once share one run.
 */
async function answerParts(
  deps: AnalyticsDeps,
  plan: PreparedQuery,
  ctx: QueryContext,
  { now, reading }: { now: Date; reading: Reading },
): Promise<{ parts: Parts; reuse: Reuse }> {
  const executor =
    deps.executor ??
    new QueryExecutor({
      ...deps,
      limits: { timeoutMs: deps.timeoutMs, maxMemoryBytes: deps.maxMemoryBytes },
    });
  const useCache = ctx.useCache ?? true;
  const reusable = deps.executor !== undefined;
  const key = AnswerReuse.key({
    query: plan.query,
    businesses: plan.businesses,
    source: plan.source,
    period: [plan.period.from, plan.period.to],
  });
  const compute = async (kept: Kept<Parts> | undefined): Promise<Computed<Parts>> => {
    const held = kept && reusable ? await whatHolds(deps, plan, kept, reading, now) : null;
    const queryRun = executor.begin({
      signal: ctx.signal,
      principal: ctx.principal ?? 'anonymous',
      useCache,
      watermark: reading.watermark,
      businesses: plan.businesses,
    });
    try {
      return await computeParts(plan, queryRun, now, { reusable, maxRows: deps.maxRows, held });
    } finally {
      queryRun.close();
    }
  };
  return executor.answers.answer<Parts>(key, reading, now.getTime(), compute, {
    fresh: !useCache,
    signal: ctx.signal,
    tags: cacheTags(plan.businesses),
  });
}

/**
 * What of a kept answer still holds at `now`, given what was projected since it was kept for
 * the businesses the query reads; null when that cannot be told (then everything runs).
 */
async function whatHolds(
  deps: AnalyticsDeps,
  plan: PreparedQuery,
  kept: Kept<Parts>,
  reading: Reading,
  now: Date,
): Promise<Held | null> {
  const from = kept.reading.changes;
  const to = reading.changes;
  const facts = sameFacts(kept.reading, reading)
    ? { everything: false, earliest: null, latest: null }
    : from && to && deps.changes
      ? await deps.changes(from, to, plan.businesses).catch(() => null)
      : null;
  if (!facts) return null;
  const answer = {
    computedAt: kept.computedAt,
    validUntil: kept.validUntil,
    horizon: kept.parts.horizon ?? null,
    from: kept.parts.from ?? null,
    comparedUntil: kept.parts.comparedUntil ?? null,
  };
  return { kept, holds: holding(plan, answer, now, facts) };
}

/** The answer as the API gives it, from the statements' answers (reused or not). */
function shapeAnswer(
  deps: AnalyticsDeps,
  plan: QueryPlan,
  parts: Parts,
  at: { now: Date; started: number; freshness: Freshness; reuse: Reuse },
): QueryResponse {
  const { query, period } = plan;
  const { now, started, freshness, reuse } = at;
  const { main, totals, totalsComparison, comparison } = parts;
  const page = pageOf(plan, main, now, deps.maxRows);
  let rows = page.rows;
  const { totalRows } = page;
  if (plan.comparison) {
    rows = attachComparison(
      rows,
      comparison?.rows ?? [],
      query,
      { current: plan.buckets, other: plan.comparison.buckets },
      comparison?.partial ?? false,
    );
  }
  const executed = [main, totals, totalsComparison, comparison].filter((e) => e !== null);
  // Nothing was read to give a reused answer.
  const read = (figure: (e: Parts['main']) => number) =>
    reuse === 'miss' ? executed.reduce((sum, e) => sum + figure(e), 0) : 0;
  const warnings = queryWarnings({
    query,
    period,
    rowCount: rows.length,
    totalRows,
    capped: query.limit === null && totalRows > query.offset + rows.length,
    partial: executed.some((e) => e.partial),
    unread: {
      metrics: main.partial || comparison?.partial ? query.metrics : [],
      totals: Boolean(totals?.partial || totalsComparison?.partial),
    },
    timeoutMs: deps.timeoutMs,
    freshness,
    staleAfterMs: deps.staleAfterMs,
    knownLabels: parts.labels,
  });
  const horizon = new Date(Math.min(now.getTime(), freshness.dataAsOf.getTime()));

  return {
    data: rows,
    metadata: {
      query: resolvedQuery(query, period),
      columns: describeColumns(query),
      row_count: rows.length,
      total_rows: totalRows,
      elapsed_ms: Math.round((performance.now() - started) * 100) / 100,
      rows_read: read((e) => e.rowsRead),
      bytes_read: read((e) => e.bytesRead),
      data_as_of: freshness.dataAsOf.toISOString(),
      source: plan.source,
      query_id: main.queryId,
      incomplete_from: incompleteFrom(
        plan.buckets ?? [{ start: period.from, end: period.to }],
        horizon,
      ),
      ...(plan.comparison
        ? {
            comparison: {
              period: {
                from: plan.comparison.period.period.from.toISOString(),
                to: plan.comparison.period.until.toISOString(),
              },
              cut_at_elapsed: plan.comparison.period.cutAtElapsed,
            },
          }
        : {}),
      // A totals statement always answers one row; only one cut by its budget may have none.
      ...(totals ? { totals: totals.rows[0] ?? unreadMetrics(query.metrics) } : {}),
      ...(totalsComparison
        ? { totals_comparison: totalsComparison.rows[0] ?? unreadMetrics(query.metrics) }
        : {}),
      cache: reuse === 'miss' && executed.every((e) => e.cache === 'hit') ? 'hit' : reuse,
    },
    ...(warnings.length > 0 ? { warnings } : {}),
  };
}

/**
 * Request → checked query → resolved period → planned sources and statements; also what the
 * benchmark runs. `force` (tests, benchmarks) picks another exact source than the first.
 */
export async function prepareQuery(
  deps: PlanningDeps,
  request: QueryRequest,
  allowed: string[] | null,
  now: Date,
  { force, reading }: { force?: SourceName | undefined; reading?: Reading } = {},
): Promise<PreparedQuery> {
  const query = parseQuery(request, {
    maxRows: deps.maxRows,
    ...(deps.zones ? { zones: deps.zones } : {}),
  });
  const businesses = businessScope(allowed, query.business);
  const period = resolveQueryPeriod(query.period, now, query.timezone, query.weekStart);
  const since = await firstFact(deps, query, period, businesses, reading);
  const plan = planQuery(query, period, {
    now,
    businesses,
    maxRows: deps.maxRows,
    since,
    ready: deps.rollups(),
    ...(force ? { force } : {}),
  });
  return { ...plan, compiled: plan.rows, businesses };
}

/**
 * Where an all_time bucket list starts: only that case needs a look at the data. It depends on
 * the businesses' facts alone, so it is kept with the reading it was read at, and read again
 * only once facts of those businesses dated before it (or erased) were projected.
 */
async function firstFact(
  deps: PlanningDeps,
  query: AnalyticsQuery,
  period: ResolvedPeriod,
  businesses: string[] | null,
  reading: Reading | undefined,
): Promise<Date | null> {
  if (period.name !== 'all_time' || !timeDimension(query)) return null;
  const read = async (): Promise<number | null> => {
    const statement = firstFactStatement(businesses);
    const result = await deps.clickhouse.query({
      query: statement.sql,
      query_params: statement.params,
      format: 'JSONEachRow',
    });
    const [row] = await result.json<{ first: number | string; facts: number | string }>();
    return row && Number(row.facts) > 0 ? Number(row.first) : null;
  };
  const holds = async (first: number | null, since: Reading) => {
    const facts =
      since.changes && reading?.changes && deps.changes
        ? await deps.changes(since.changes, reading.changes, businesses).catch(() => null)
        : null;
    return (
      facts !== null &&
      !facts.everything &&
      (facts.earliest === null || (first !== null && facts.earliest >= first))
    );
  };
  const answers = deps.executor?.answers;
  const first =
    answers && reading
      ? await answers.keptOver(AnswerReuse.key(['first_fact', businesses]), reading, read, {
          holds,
          tags: cacheTags(businesses),
        })
      : await read();
  return first === null ? null : new Date(first);
}
