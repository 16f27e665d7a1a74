import { METRICS, needs, noneLabel } from '../catalog/catalog.ts';
import { FILTER_OPERATORS } from '../catalog/filter-ops.ts';
import { filterConditions } from '../parse/query-filters.ts';
import type { AnalyticsQuery } from '../parse/query-parser.ts';
import type { StateBuckets } from '../period/buckets.ts';
import type { ResolvedPeriod } from '../period/period.ts';
import { rollupDef, type SourceName } from '../sources/rollups.ts';
import { slotCeiling } from '../sources/source-decider.ts';
import { commonTables, flowSelect, type SourceContext, stateSelect } from './metric-sources.ts';
import { BUSINESSES, LIMIT, OFFSET } from './sql/query-params.ts';
import { withSettings } from './sql/select-clauses.ts';
import {
  alias,
  type ClickHouseType,
  ident,
  join,
  render,
  type SqlValue,
  sql,
} from './sql/sql-value.ts';
import { type FillGrid, zeroFilled } from './zero-fill.ts';

/** A compiled statement is plain data: SQL text with `{name:Type}` placeholders, and values. */
export interface CompiledQuery {
  sql: string;
  params: Record<string, unknown>;
}

/** The rows statement with its structure beside its text, for what builds on it. */
export interface CompiledRows extends CompiledQuery {
  /** The statement without its settings: what a wrapping select reads from. */
  statement: SqlValue;
  /** `name = value` pieces of its `SETTINGS` clause, none when it has none. */
  settings: SqlValue[];
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

/** The text and values of `compileRows`, for callers that run the statement as it is. */
export function compileQuery(query: AnalyticsQuery, options: CompileOptions): CompiledQuery {
  const { sql, params } = compileRows(query, options);
  return { sql, params };
}

/**
 * One statement per query. Flow metrics aggregate facts inside the period; state metrics
 * aggregate task states at bucket ends. When both are asked for, each source fills the other's
 * columns with neutral values and an outer GROUP BY merges them row by row (max of a value and
 * its neutral is the value). The rows before LIMIT are counted by the engine
 * (`rows_before_limit_at_least`, exact with `exact_rows_before_limit`), so no page is needed
 * to know the total.
 */
export function compileRows(query: AnalyticsQuery, options: CompileOptions): CompiledRows {
  const sources = new Set(query.metrics.map((name) => METRICS[name].source));
  const ctx: SourceContext = {
    dimensions: query.dimensions,
    metrics: query.metrics,
    filters: query.filters,
    scope: options.businesses === null ? null : sql`business IN ${BUSINESSES}`,
    union: sources.size > 1,
    source: options.source ?? 'facts',
    instants: options.buckets?.ats.length ?? 0,
    stateBase: options.stateBase ?? null,
    weekStart: query.weekStart,
  };
  const tables = commonTables(ctx);
  const body: SqlValue[] = [];
  const dimensions = query.dimensions.map(ident);
  if (ctx.union) {
    const merged = query.metrics.map((name) => alias(sql`max(${ident(name)})`, name));
    body.push(
      sql`SELECT ${join([...dimensions, ...merged])}`,
      sql`FROM (`,
      ...flowSelect(ctx),
      sql`UNION ALL`,
      ...stateSelect(ctx),
      sql`)`,
    );
    if (dimensions.length > 0) body.push(sql`GROUP BY ${join(dimensions)}`);
  } else {
    body.push(...(sources.has('flow') ? flowSelect(ctx) : stateSelect(ctx)));
  }
  const filled = options.fill ? zeroFilled(query, join(body, '\n')) : null;
  if (filled) tables.push(filled.table);
  const lines = tables.length > 0 ? [sql`WITH ${join(tables, ',\n')}`] : [];
  lines.push(...(filled ? filled.lines : body));
  const order = orderTerms(query);
  if (order.length > 0) lines.push(sql`ORDER BY ${join(order)}`);
  lines.push(
    (options.offset ?? 0) > 0 ? sql`LIMIT ${LIMIT} OFFSET ${OFFSET}` : sql`LIMIT ${LIMIT}`,
  );
  // Blocked tasks join every open task to its dependencies at each bucket: on a large business
  // that join outgrows the memory cap as a hash table, while a sort-merge join spills to disk.
  const settings: SqlValue[] = [];
  if (ctx.source === 'facts' && needs(query, 'blocked_at')) {
    settings.push(sql`join_algorithm = 'partial_merge'`);
  }
  // `kind = 'task_created' AND task_gid IN completed_tasks` looks every row up in the set
  // unless the engine may skip the lookup where the kind already fails: about a fifth of the
  // period's facts are creations, and the lookups were most of the statement's time.
  if (ctx.source === 'facts' && needs(query, 'completed_tasks')) {
    settings.push(sql`short_circuit_function_evaluation = 'force_enable'`);
  }
  const statement = join(lines, '\n');
  const { sql: text, parameters } = render(withSettings(statement, settings));
  return { statement, settings, sql: text, params: bindParams(parameters, query, options) };
}

/** The caller's order first, then every dimension not yet named, so pages are stable. */
function orderTerms(query: AnalyticsQuery): SqlValue[] {
  const named = new Set<string>(query.orderBy.map((order) => order.field));
  return [
    // Undefined values (no completion to average) sort last either way, as ClickHouse does.
    ...query.orderBy.map(
      (order) => sql`${ident(order.field)} ${order.direction === 'desc' ? sql`DESC` : sql`ASC`}`,
    ),
    ...query.dimensions.filter((name) => !named.has(name)).map((name) => sql`${ident(name)} ASC`),
  ];
}

function bindParams(
  parameters: Record<string, ClickHouseType>,
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
  const uses = (name: string) => name in parameters;
  // A bucket list can run to thousands of instants: format only those the statement reads.
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
  // Bind only what the statement names: engines reject parameters it does not mention.
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
