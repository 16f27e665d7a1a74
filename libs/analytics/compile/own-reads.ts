import { METRICS, needs } from '../catalog/catalog.ts';
import type { AnalyticsQuery } from '../parse/query-parser.ts';
import { rollupDef, type SourceName } from '../sources/rollups.ts';
import {
  type CompiledQuery,
  type CompiledRows,
  type CompileOptions,
  stateBaseEnd,
  stateEnd,
  toClickHouseTime,
} from './query-compiler.ts';
import { BUSINESSES, TIME } from './sql/query-params.ts';
import { withSettings } from './sql/select-clauses.ts';
import {
  and,
  ident,
  idents,
  join,
  param,
  raw,
  render,
  type SqlValue,
  sql,
  wordsIn,
} from './sql/sql-value.ts';

/**
 * What `metadata.rows_read` and `bytes_read` report: the caller's own rows in the table ranges a
 * statement reads, never the engine's figures. ClickHouse reads whole granules, and the tables
 * are ordered by business, so its figures include the neighbouring businesses' rows that share
 * a granule and move when those businesses write: a volume leak. These figures depend on the
 * caller's rows alone, are the same however the parts happen to be merged, and still say how
 * much of the caller's data the answer covers. Operators see the engine's own figures in
 * Prometheus (`QueryExecutorDeps.engineRead`).
 */

/** One range of one table a statement reads: [from, to) on its time column; from null: all history. */
export interface Scan {
  table: SourceName;
  from: Date | null;
  to: Date;
}

/** A statement as the planner hands it out: with the statement that counts what it reads. */
export interface Statement extends CompiledRows {
  ownReads: CompiledQuery;
}

/** Each fact column's size in a row: a string by its length in bytes, others by their width. */
const FACT_COLUMNS: Record<string, number | 'string'> = {
  fact_id: 8,
  kind: 'string',
  business: 'string',
  task_gid: 'string',
  occurred_at: 8,
  project: 'string',
  assignee: 'string',
  status: 'string',
  previous_status: 'string',
  previous_project: 'string',
  previous_assignee: 'string',
  due_on: 4,
  previous_due_on: 4,
  task_created_at: 8,
  dependency_gid: 'string',
  created_project: 'string',
  created_assignee: 'string',
  created_status: 'string',
  first_completion: 1,
  started_at: 8,
  blocked_ms: 8,
  projected_at: 8,
};

/** A rollup's label columns (its key with `slot`); every other column is a value. */
const ROLLUP_LABELS: Record<string, number | 'string'> = {
  business: 'string',
  slot: 4,
  project: 'string',
  assignee: 'string',
  status: 'string',
};
/** Every value column counts 8 bytes: a sum, or the one number a merged state stands for. */
const ROLLUP_VALUES = [
  'facts',
  'created',
  'completed',
  'cancelled',
  'dependencies_added',
  'dependencies_removed',
  'cycle_hours_sum',
  'cycle_hours',
  'assignees',
  'open_change',
  'due_change',
  'completed_by',
  'blocked_change',
  'started',
  'work_hours_sum',
  'work_hours',
  'timed',
  'blocked_ms_sum',
  'timed_cycle_ms_sum',
];
const VALUE_BYTES = 8;

/**
 * The ranges the compiled statement of `query` reads, mirroring the compiler: flows read the
 * period on their source (and completions in the period on facts for `completion_rate`); state
 * reads every row of its source before the last instant it is measured at (or the period's
 * end). A range read twice by one statement counts once.
 */
export function scansOf(query: AnalyticsQuery, options: CompileOptions): Scan[] {
  const source = options.source ?? 'facts';
  const metrics = query.metrics.map((name) => METRICS[name]);
  const period = { from: options.period.from, to: options.period.to };
  const scans: Scan[] = [];
  if (metrics.some((metric) => metric.source === 'flow')) scans.push({ table: source, ...period });
  const completions = needs(query, 'completed_tasks');
  // On facts the completions are a second read of the period; a rollup keeps them in its rows.
  if (completions && source === 'facts') {
    scans.push({ table: 'facts', ...period });
  }
  if (metrics.some((metric) => metric.source === 'state') && options.buckets) {
    // State is read up to its last instant, often "now"; no fact lies between now and the
    // period's end, so counting up to the later of the two gives the same figure and lets the
    // count be cached for as long as the projection does not move.
    const end = Math.max(stateEnd(options.buckets, options.source).getTime(), period.to.getTime());
    if (options.stateBase && source !== 'facts') {
      // The whole days before the base's end are read from the daily base (state-from-rollups.ts).
      const base = stateBaseEnd(options.buckets, options.source);
      scans.push({ table: options.stateBase, from: null, to: base });
      scans.push({ table: source, from: base, to: new Date(end) });
    } else {
      scans.push({ table: source, from: null, to: new Date(end) });
    }
  }
  const seen = new Set<string>();
  return scans.filter((scan) => {
    const key = `${scan.table}:${scan.from?.getTime() ?? ''}:${scan.to.getTime()}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * One statement counting the caller's rows in `scans` of `statement`, and their bytes: for each
 * row, the columns the statement names, a string by its length, a number or an instant by its
 * width. A rollup's rows are counted as if fully merged (one per label set and slot), so the
 * figures do not depend on when ClickHouse merges parts.
 */
export function compileOwnReads(
  statement: CompiledRows,
  scans: Scan[],
  businesses: string[] | null,
): CompiledQuery {
  const words = wordsIn(withSettings(statement.statement, statement.settings));
  const named = (column: string) => words.has(column);
  const params: Record<string, unknown> = {};
  if (businesses !== null) params.businesses = businesses;
  const parts = scans.map((scan, i) => {
    const time = ident(timeColumn(scan));
    const range = and([
      businesses === null ? null : sql`business IN ${BUSINESSES}`,
      scan.from === null ? null : sql`${time} >= ${param(`s${i}_from`, TIME)}`,
      sql`${time} < ${param(`s${i}_to`, TIME)}`,
    ]);
    if (scan.from !== null) params[`s${i}_from`] = toClickHouseTime(scan.from);
    params[`s${i}_to`] = toClickHouseTime(scan.to);
    if (scan.table === 'facts') {
      const columns = Object.entries(FACT_COLUMNS).filter(([name]) => named(name));
      return sql`SELECT count() AS rows, ${bytes(columns, 0)} AS bytes FROM facts WHERE ${range}`;
    }
    const key = [
      'business',
      'slot',
      ...rollupDef(scan.table).labels.filter((l) => l !== 'business'),
    ];
    const labels = Object.entries(ROLLUP_LABELS).filter(
      ([name]) => key.includes(name) && named(name),
    );
    const values = ROLLUP_VALUES.filter(named).length * VALUE_BYTES;
    return sql`SELECT count() AS rows, ${bytes(labels, values)} AS bytes FROM (SELECT DISTINCT ${idents(key)} FROM ${ident(scan.table)} WHERE ${range})`;
  });
  const reads = sql`SELECT sum(rows) AS rows, sum(bytes) AS bytes FROM (${join(parts, ' UNION ALL ')})`;
  return { sql: render(reads).sql, params };
}

const timeColumn = (scan: Scan) => (scan.table === 'facts' ? 'occurred_at' : 'slot');

function bytes(columns: Array<[string, number | 'string']>, extra: number): SqlValue {
  const strings = columns
    .filter(([, size]) => size === 'string')
    .map(([name]) => sql`length(${ident(name)})`);
  const fixed = columns.reduce((sum, [, size]) => sum + (size === 'string' ? 0 : size), extra);
  const perRow = strings.length > 0 ? sql`sum(${join(strings, ' + ')}) + ` : join([]);
  return sql`toUInt64(${perRow}count() * ${raw(String(fixed))})`;
}

/** The figures an own-reads statement answered. */
export function ownReadFigures(data: Array<Record<string, unknown>> | undefined): {
  rows: number;
  bytes: number;
} {
  const row = data?.[0] ?? {};
  return { rows: Number(row.rows ?? 0), bytes: Number(row.bytes ?? 0) };
}
