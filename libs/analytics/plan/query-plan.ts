import { DIMENSIONS, timeDimension } from '../catalog/catalog.ts';
import { knownLabelsStatement } from '../compile/known-labels.ts';
import { compileOwnReads, type Statement, scansOf } from '../compile/own-reads.ts';
import { type CompiledQuery, type CompileOptions, compileRows } from '../compile/query-compiler.ts';
import type { AnalyticsQuery } from '../parse/query-parser.ts';
import { stateBuckets, type TimeBucket, timeBuckets } from '../period/buckets.ts';
import { type ComparisonPeriod, comparisonPeriod } from '../period/comparison-period.ts';
import type { ResolvedPeriod } from '../period/period.ts';
import { type RollupName, type SourceName, stateBaseOf } from '../sources/rollups.ts';
import { exactSources } from '../sources/source-decider.ts';

/**
 * Everything one request runs, decided before anything runs: the statement for the rows, and
 * those for totals and comparisons when asked for. Each is the same compiler applied to a
 * variant of the query (no dimensions for totals, the other period for a comparison), so a
 * total or a comparison means exactly what a row means. Each carries the statement that counts
 * the caller's own rows in what it reads (`own-reads.ts`).
 */
export interface QueryPlan {
  query: AnalyticsQuery;
  period: ResolvedPeriod;
  /** The time dimension's buckets over the period, or null without one. */
  buckets: TimeBucket[] | null;
  /** Only a time dimension: every bucket is answered, and paged here rather than in SQL. */
  series: boolean;
  /** Where the rows are read from, and every source that answers them exactly. */
  source: SourceName;
  sources: SourceName[];
  rows: Statement;
  /**
   * A series' row statement over its buckets from `index` on: what is left to compute when the
   * earlier buckets are known (answer-reuse.ts keeps them).
   */
  rowsFrom(index: number): Statement;
  totals: Statement | null;
  /**
   * Which labels named by `eq`/`in` conditions the businesses ever had (`known-labels.ts`), for
   * the `unknown_filter_value` warning; null without such a condition.
   */
  labels: CompiledQuery | null;
  comparison: {
    period: ComparisonPeriod;
    buckets: TimeBucket[] | null;
    /** The comparison rows for the labels of a page of current rows. */
    rows(page: Array<Record<string, unknown>>): Statement | null;
    /** A series' comparison rows over the other period's buckets from `index` on. */
    rowsFrom(index: number): Statement;
    totals: Statement | null;
  } | null;
}

export interface PlanOptions {
  now: Date;
  /** Businesses the statements are restricted to; null means no restriction. */
  businesses: string[] | null;
  /** `CAIRN_QUERY_MAX_ROWS`: a row statement without the caller's limit stops there. */
  maxRows: number;
  /** The earliest fact in scope: where an all_time series starts. */
  since: Date | null;
  /** Rollups that hold every fact. */
  ready: ReadonlySet<RollupName>;
  /** Tests and benchmarks: read the rows from this source, which must answer them exactly. */
  force?: SourceName;
}

export function planQuery(
  query: AnalyticsQuery,
  period: ResolvedPeriod,
  options: PlanOptions,
): QueryPlan {
  const time = timeDimension(query);
  const buckets = time ? timeBuckets(period, time, options.since) : null;
  const series = time !== undefined && query.dimensions.length === 1;
  const { businesses } = options;
  // Each statement gets its own source: a total or a cut comparison may fall on boundaries no
  // rollup has, and is then read from facts. A forced source is kept wherever it is exact.
  const sourceOf = (variant: AnalyticsQuery, of: ResolvedPeriod): SourceName => {
    const exact = exactSources(variant, of, options.ready, options.now);
    const forced = options.force !== undefined && exact.includes(options.force);
    return forced ? (options.force as SourceName) : (exact[0] as SourceName);
  };
  const compile = (
    variant: AnalyticsQuery,
    rest: Omit<CompileOptions, 'source' | 'businesses'>,
  ): Statement => {
    const source = sourceOf(variant, rest.period);
    const stateBase = stateBaseOf(source, options.ready);
    const compileOptions = { ...rest, businesses, source, stateBase };
    const compiled = compileRows(variant, compileOptions);
    const scans = scansOf(variant, compileOptions);
    return { ...compiled, ownReads: compileOwnReads(compiled, scans, businesses) };
  };
  const whole = { ...query, dimensions: [], orderBy: [] };
  const totalsOf = (of: ResolvedPeriod, now: Date) =>
    compile(whole, { period: of, rowLimit: 1, buckets: stateBuckets(of, null, now) });
  const rowsOf = (
    variant: AnalyticsQuery,
    of: ResolvedPeriod,
    ofBuckets: TimeBucket[] | null,
    now: Date,
    page: { rowLimit: number; offset: number },
  ) => compile(variant, { period: of, ...page, buckets: stateBuckets(of, ofBuckets, now) });
  // Label combinations × every bucket; a series is zero-filled whatever `fill` says (query-rows.ts).
  const fill =
    query.fill === 'zero' && buckets && !series
      ? {
          labels: buckets.map((bucket) => bucket.label),
          started: buckets.filter((bucket) => bucket.start.getTime() < options.now.getTime())
            .length,
        }
      : undefined;

  const sources = exactSources(query, period, options.ready, options.now);
  if (options.force !== undefined && !sources.includes(options.force)) {
    throw new Error(
      `${options.force} cannot answer this query exactly (${sources.join(', ')} can)`,
    );
  }
  const all = { rowLimit: Math.max(1, buckets?.length ?? 1), offset: 0 };
  const plan: QueryPlan = {
    query,
    period,
    buckets,
    series,
    source: options.force ?? (sources[0] as SourceName),
    sources,
    rows: compile(query, {
      period,
      ...(series ? all : { rowLimit: query.limit ?? options.maxRows, offset: query.offset }),
      buckets: stateBuckets(period, buckets, options.now),
      ...(fill ? { fill } : {}),
    }),
    rowsFrom(index) {
      const tail = (buckets ?? []).slice(index);
      const first = tail[0];
      if (!(series && first)) throw new Error('only a series has buckets to start from');
      // Its own period, from the first bucket computed: its bounds are bucket boundaries, which
      // every source answering the whole series has among its slot boundaries.
      const of: ResolvedPeriod = { ...period, name: 'custom', from: first.start };
      return rowsOf(query, of, tail, options.now, { rowLimit: tail.length, offset: 0 });
    },
    totals: query.totals ? totalsOf(period, options.now) : null,
    labels: knownLabelsStatement(query.filters, businesses),
    comparison: null,
  };
  if (query.compare === null) return plan;

  const other = comparisonPeriod(period, query.compare, options.now);
  const counted = { ...other.period, to: other.until };
  const otherBuckets = time ? timeBuckets(other.period, time, null) : null;
  plan.comparison = {
    period: other,
    buckets: otherBuckets,
    rows(page) {
      if (page.length === 0) return null;
      if (series) {
        const every = { rowLimit: Math.max(1, otherBuckets?.length ?? 1), offset: 0 };
        return rowsOf(query, counted, otherBuckets, other.until, every);
      }
      // Only the labels on this page: the comparison never needs more rows than the page.
      const labels = query.dimensions
        .filter((name) => !DIMENSIONS[name].time)
        .map((dimension) => ({
          dimension,
          op: 'in' as const,
          values: [...new Set(page.map((row) => row[dimension] as string | null))],
        }));
      // Unfilled: a label's bucket the other period has no row for compares with empty values.
      const restricted = {
        ...query,
        filters: [...query.filters, ...labels],
        orderBy: [],
        fill: null,
      };
      const most = { rowLimit: options.maxRows, offset: 0 };
      return rowsOf(restricted, counted, otherBuckets, other.until, most);
    },
    rowsFrom(index) {
      const tail = (otherBuckets ?? []).slice(index);
      const first = tail[0];
      if (!(series && first)) throw new Error('only a series has buckets to start from');
      const of: ResolvedPeriod = { ...counted, name: 'custom', from: first.start };
      return rowsOf(query, of, tail, other.until, { rowLimit: tail.length, offset: 0 });
    },
    totals: query.totals ? totalsOf(counted, other.until) : null,
  };
  return plan;
}
