import { METRICS, needs, noneLabel } from '../catalog/catalog.ts';
import { FILTER_OPERATORS } from '../catalog/filter-ops.ts';
import { filterConditions } from '../parse/query-filters.ts';
import type { AnalyticsQuery } from '../parse/query-parser.ts';
import type { StateBuckets } from '../period/buckets.ts';
import type { ResolvedPeriod } from '../period/period.ts';
import { rollupDef, type SourceName } from '../sources/rollups.ts';
import { slotCeiling } from '../sources/source-decider.ts';
import { commonTables, flowSelect, type SourceContext, stateSelect } from './metric-sources.ts';
import { type FillGrid, zeroFilled } from './zero-fill.ts';

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
  /** Rows to skip first, in the statement's stable order. */
  offset?: number;
  /** Where state metrics are measured; needed only when the query asks for one. */
  buckets?: StateBuckets;
  /** The table the planner chose (default facts). */
  source?: SourceName;
  /** A daily rollup the state's whole UTC days are read from (`stateBaseOf`). */
  stateBase?: SourceName | null;
  /** `fill: "zero"`: the buckets every label combination gets (a time and a label dimension). */
  fill?: FillGrid;
}

/**
 * One statement per query. Flow metrics aggregate facts inside the period; state metrics
 * aggregate task states at bucket ends. When both are asked for, each source fills the other's
 * columns with neutral values and an outer GROUP BY merges them row by row (max of a value and
 * its neutral is the value). The rows before LIMIT are counted by the engine
 * (`rows_before_limit_at_least`, exact with `exact_rows_before_limit`), so no page is needed
 * to know the total.
 */
export function compileQuery(query: AnalyticsQuery, options: CompileOptions): CompiledQuery {
  const sources = new Set(query.metrics.map((name) => METRICS[name].source));
  const ctx: SourceContext = {
    dimensions: query.dimensions,
    metrics: query.metrics,
    filters: query.filters,
    scope: options.businesses === null ? null : 'business IN {businesses:Array(String)}',
    union: sources.size > 1,
    source: options.source ?? 'facts',
    instants: options.buckets?.ats.length ?? 0,
    stateBase: options.stateBase ?? null,
    weekStart: query.weekStart,
  };
  const tables = commonTables(ctx);
  const body: string[] = [];
  if (ctx.union) {
    const merged = query.metrics.map((name) => `max(${name}) AS ${name}`);
    body.push(
      `SELECT ${[...query.dimensions, ...merged].join(', ')}`,
      'FROM (',
      ...flowSelect(ctx),
      'UNION ALL',
      ...stateSelect(ctx),
      ')',
    );
    if (query.dimensions.length > 0) body.push(`GROUP BY ${query.dimensions.join(', ')}`);
  } else {
    body.push(...(sources.has('flow') ? flowSelect(ctx) : stateSelect(ctx)));
  }
  const filled = options.fill ? zeroFilled(query, body) : null;
  if (filled) tables.push(filled.table);
  const lines = tables.length > 0 ? [`WITH ${tables.join(',\n')}`] : [];
  lines.push(...(filled ? filled.lines : body));
  const order = orderTerms(query);
  if (order.length > 0) lines.push(`ORDER BY ${order.join(', ')}`);
  lines.push(
    (options.offset ?? 0) > 0
      ? 'LIMIT {limit:UInt32} OFFSET {offset:UInt64}'
      : 'LIMIT {limit:UInt32}',
  );
  // Blocked tasks join every open task to its dependencies at each bucket: on a large business
  // that join outgrows the memory cap as a hash table, while a sort-merge join spills to disk.
  const settings: string[] = [];
  if (ctx.source === 'facts' && needs(query, 'blocked_at')) {
    settings.push("join_algorithm = 'partial_merge'");
  }
  // `kind = 'task_created' AND task_gid IN completed_tasks` looks every row up in the set
  // unless the engine may skip the lookup where the kind already fails: about a fifth of the
  // period's facts are creations, and the lookups were most of the statement's time.
  if (ctx.source === 'facts' && needs(query, 'completed_tasks')) {
    settings.push("short_circuit_function_evaluation = 'force_enable'");
  }
  if (settings.length > 0) lines.push(`SETTINGS ${settings.join(', ')}`);
  const sql = lines.join('\n');
  return { sql, params: bindParams(sql, query, options) };
}

/** The caller's order first, then every dimension not yet named, so pages are stable. */
function orderTerms(query: AnalyticsQuery): string[] {
  const named = new Set<string>(query.orderBy.map((order) => order.field));
  return [
    // Undefined values (no completion to average) sort last either way, as ClickHouse does.
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
  const { buckets } = options;
  const uses = (name: string) => sql.includes(`{${name}:`);
  // A bucket list can run to thousands of instants: format only those the text reads.
  if (buckets) {
    if (uses('starts')) params.starts = buckets.starts.map(toClickHouseTime);
    if (uses('ats')) params.ats = buckets.ats.map(toClickHouseTime);
    if (uses('slot_ats')) {
      params.slot_ats = stateReads(buckets, options.source).map(toClickHouseTime);
    }
    if (uses('state_to')) params.state_to = toClickHouseTime(stateEnd(buckets, options.source));
    if (uses('state_base'))
      params.state_base = toClickHouseTime(stateBaseEnd(buckets, options.source));
  }
  filterConditions(query.filters).forEach((filter, i) => {
    // Null is how a query names "no label"; the facts store it as the dimension's `none`.
    const none = noneLabel(filter.dimension) ?? '';
    const values = filter.values.map((value) => value ?? none);
    params[`f${i}`] = FILTER_OPERATORS[filter.op].oneValue ? values[0] : values;
  });
  if (options.fill) {
    params.fill = options.fill.labels;
    params.fill_started = options.fill.started;
  }
  params.limit = options.rowLimit;
  params.offset = options.offset ?? 0;
  // Bind only what the text uses: engines reject parameters a statement does not mention.
  for (const name of Object.keys(params)) {
    if (!uses(name)) delete params[name];
  }
  return params;
}

/** Where state is read on `source`: each bucket instant, moved up to a slot boundary on a rollup. */
function stateReads(buckets: StateBuckets, source: SourceName = 'facts'): Date[] {
  if (source === 'facts') return buckets.ats;
  const { slotMs } = rollupDef(source);
  return buckets.ats.map((at) => slotCeiling(at, slotMs));
}

/** The end of what a state statement reads (`state_to`): every row before it counts. */
export function stateEnd(buckets: StateBuckets, source?: SourceName): Date {
  return new Date(Math.max(0, ...stateReads(buckets, source).map((at) => at.getTime())));
}

/**
 * Where the daily base of a state statement ends (`state_base`): the UTC midnight at or before
 * its first instant, so every day read from the base lies wholly before every instant.
 */
export function stateBaseEnd(buckets: StateBuckets, source?: SourceName): Date {
  const first = Math.min(...stateReads(buckets, source).map((at) => at.getTime()));
  if (!Number.isFinite(first) || first <= 0) return new Date(0);
  return new Date(Math.floor(first / 86_400_000) * 86_400_000);
}

/** Parameter text for `DateTime64(3, 'UTC')`. */
export function toClickHouseTime(instant: Date): string {
  return instant.toISOString().replace('T', ' ').replace('Z', '');
}
