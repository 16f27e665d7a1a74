import {
  DIMENSIONS,
  type DimensionName,
  METRICS,
  type MetricName,
  type MetricNeed,
} from './catalog.ts';
import { FILTER_OPERATORS } from './filter-ops.ts';
import type { QueryFilter } from './query-parser.ts';
import type { SourceName } from './rollups.ts';

/** Pieces shared by every source of one query. Values are bound: only names reach the text. */
export interface SourceContext {
  dimensions: DimensionName[];
  metrics: MetricName[];
  filters: QueryFilter[];
  /** `business IN {businesses:…}` when the caller is restricted, else null. */
  scope: string | null;
  /** Whether other sources share the result, so this one fills their columns with neutrals. */
  union: boolean;
  /** The table the planner chose: facts, or a rollup. */
  source: SourceName;
  /** How many instants state is read at (one per time bucket; one without a time dimension). */
  instants: number;
}

const onRollup = (ctx: SourceContext) => ctx.source !== 'facts';

/** The time dimension a query groups by, if any: rates compare within its buckets. */
const timeDimension = (ctx: SourceContext) => ctx.dimensions.find((name) => DIMENSIONS[name].time);

/** The column a source's rows are placed in time by. */
const instantOf = (ctx: SourceContext) => (onRollup(ctx) ? 'slot' : 'occurred_at');

const TIME = "DateTime64(3, 'UTC')";
const TIME_ARRAY = `Array(${TIME})`;
/** Statuses that count as open. */
export const OPEN = "('open', 'in_progress')";
/** The "no next fact" end of a span: later than any bucket end. */
export const NEVER = "toDateTime64('2299-12-31 00:00:00', 3, 'UTC')";

const and = (conditions: Array<string | null>) => conditions.filter(Boolean).join(' AND ');

function dimensionColumns(ctx: SourceContext, instant: string): string[] {
  return ctx.dimensions.map((name) => {
    const expression = DIMENSIONS[name].sql(instant);
    return expression === name ? name : `${expression} AS ${name}`;
  });
}

/** `f{i}` parameters are bound by the compiler in the same order. */
export function filterConditions(filters: QueryFilter[], instant: string): string[] {
  return filters.map((filter, i) => {
    const expression = DIMENSIONS[filter.dimension].sql(instant);
    const operator = FILTER_OPERATORS[filter.op];
    return `${expression} ${operator.sql} {f${i}:${operator.oneValue ? 'String' : 'Array(String)'}}`;
  });
}

/** Each requested metric: its own aggregate here, a neutral value where another source computes it. */
function metricColumns(ctx: SourceContext, source: 'flow' | 'state'): string[] {
  return ctx.metrics
    .filter((name) => ctx.union || METRICS[name].source === source)
    .map((name) => {
      const metric = METRICS[name];
      if (metric.source !== source) return `${metric.neutral} AS ${name}`;
      const sql = onRollup(ctx) ? metric.sql.rollup : metric.sql.facts;
      return `${sql} AS ${name}`;
    });
}

const groupBy = (ctx: SourceContext) =>
  ctx.dimensions.length > 0 ? [`GROUP BY ${ctx.dimensions.join(', ')}`] : [];

/**
 * Metrics over the facts that happened inside [from, to). On a rollup, rows holding only a
 * closed state's labels (no fact of their own) stay out, or they would add empty groups.
 */
export function flowSelect(ctx: SourceContext): string[] {
  const instant = instantOf(ctx);
  const completions = onRollup(ctx) && needs(ctx, 'completed_tasks');
  const from = completions
    ? `(SELECT *, ${completedInBucket(ctx)} AS completed_in_bucket FROM ${ctx.source})`
    : ctx.source;
  // Until parts merge, a first completion's credit is a row of its own without facts; its
  // creation's row holds the same slot and labels, so it adds no group of its own.
  const own = completions ? '(facts > 0 OR notEmpty(completed_by.1))' : 'facts > 0';
  return [
    `SELECT ${[...dimensionColumns(ctx, instant), ...metricColumns(ctx, 'flow')].join(', ')}`,
    `FROM ${from}`,
    `WHERE ${and([ctx.scope, `${instant} >= {from:${TIME}}`, `${instant} < {to:${TIME}}`, ...filterConditions(ctx.filters, instant), onRollup(ctx) ? own : null])}`,
    ...groupBy(ctx),
  ];
}

/**
 * A rollup row's creations that were first completed before the row's bucket ends: its
 * `completed_by` slots that fall in the same bucket as its own slot (a later slot, since no task
 * is completed before it is created) and before the period's end. The planner sends a query
 * here only when every bucket boundary is a slot boundary, so comparing slots is exact.
 */
function completedInBucket(ctx: SourceContext): string {
  const time = timeDimension(ctx);
  const sameBucket = time
    ? ` AND ${DIMENSIONS[time].sql('done')} = ${DIMENSIONS[time].sql('slot')}`
    : '';
  return `arraySum((done, n) -> if(done < {to:${TIME}}${sameBucket}, n, 0), completed_by.1, completed_by.2)`;
}

/** Metrics over the open tasks at each bucket's `at` instant (rows of `task_at`). */
export function stateSelect(ctx: SourceContext): string[] {
  // On a rollup the blocked count is a column of task_at itself.
  const blocked = needs(ctx, 'blocked_at') && !onRollup(ctx);
  const where = filterConditions(ctx.filters, 'bucket');
  return [
    `SELECT ${[...dimensionColumns(ctx, 'bucket'), ...metricColumns(ctx, 'state')].join(', ')}`,
    blocked ? 'FROM task_at LEFT JOIN blocked_at USING (at, task_gid)' : 'FROM task_at',
    ...(where.length > 0 ? [`WHERE ${and(where)}`] : []),
    ...groupBy(ctx),
    // Labels whose tasks have all closed sum to nothing: no row, as for labels never open.
    ...(ctx.dimensions.length > 0 ? ['HAVING sum(weight) != 0'] : []),
  ];
}

/** Facts of one entity as spans [occurred_at, next_at): the state each fact left behind. */
export function spans(partition: string, columns: string, where: string): string {
  return [
    `SELECT ${columns}, occurred_at, leadInFrame(occurred_at, 1, ${NEVER})`,
    `OVER (PARTITION BY ${partition} ORDER BY occurred_at, fact_id ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS next_at`,
    `FROM facts WHERE ${where}`,
  ].join(' ');
}

/** The bucket indexes whose `at` falls in a span: where that span is the current state. */
const BUCKET_JOIN = `ARRAY JOIN arrayFilter(i -> {ats:${TIME_ARRAY}}[i] > occurred_at AND {ats:${TIME_ARRAY}}[i] <= next_at, arrayEnumerate({ats:${TIME_ARRAY}})) AS i`;
/** The bucket a row stands for, by its index in the bound arrays. */
const bucketColumns = (index: string) =>
  `{starts:${TIME_ARRAY}}[${index}] AS bucket, {ats:${TIME_ARRAY}}[${index}] AS at`;
const BEFORE_END = `occurred_at < {state_to:${TIME}}`;

const needs = (ctx: SourceContext, need: MetricNeed) =>
  ctx.metrics.some((name) => (METRICS[name].needs as readonly MetricNeed[]).includes(need));

/** CTEs the state select (and, for completion_rate, the flow select) read from. */
export function commonTables(ctx: SourceContext): string[] {
  const tables: string[] = [];
  if (!onRollup(ctx) && needs(ctx, 'completed_tasks')) {
    // A task created in the period is completed after its creation: completions before the
    // period cannot count, so only the period's own completions are read. Each carries its
    // task's creation instant (`task_created_at`, on every fact the write side has produced),
    // so one in another bucket than its creation is left out here and the set holds bare task
    // ids: looking up (task, bucket) tuples instead took more than twice as long at 100M facts.
    const time = timeDimension(ctx);
    const sameBucket = time
      ? `${DIMENSIONS[time].sql('task_created_at')} = ${DIMENSIONS[time].sql('occurred_at')}`
      : null;
    tables.push(
      `completed_tasks AS (SELECT task_gid FROM facts WHERE ${and([ctx.scope, "kind = 'task_completed'", `occurred_at >= {from:${TIME}}`, `occurred_at < {to:${TIME}}`, sameBucket])})`,
    );
  }
  if (!ctx.metrics.some((name) => METRICS[name].source === 'state')) return tables;
  if (onRollup(ctx)) return [...tables, rollupOpenCounts(ctx)];
  if (!needs(ctx, 'blocked_at')) return [...tables, openTaskCounts(ctx)];
  // Only facts that can change a task's state: an edge fact carries its task's state as it
  // stands, so leaving those out gives the same spans from about a fifth fewer rows to sort.
  const taskSpans = spans(
    'task_gid',
    'task_gid, kind, business, project, assignee, status, due_on',
    and([
      ctx.scope,
      "kind IN ('task_created', 'task_updated', 'task_completed', 'task_deleted')",
      BEFORE_END,
    ]),
  );
  tables.push(
    `task_at AS (SELECT ${bucketColumns('i')}, task_gid, business, project, assignee, status, due_on, 1 AS weight FROM (${taskSpans}) ${BUCKET_JOIN} WHERE kind != 'task_deleted' AND status IN ${OPEN})`,
  );
  const edgeSpans = spans(
    'task_gid, dependency_gid',
    'task_gid, dependency_gid, kind',
    and([ctx.scope, "kind IN ('dependency_added', 'dependency_removed')", BEFORE_END]),
  );
  tables.push(
    `edge_at AS (SELECT {ats:${TIME_ARRAY}}[i] AS at, task_gid, dependency_gid FROM (${edgeSpans}) ${BUCKET_JOIN} WHERE kind = 'dependency_added')`,
    'blocked_at AS (SELECT DISTINCT edge_at.at AS at, edge_at.task_gid AS task_gid, 1 AS blocked FROM edge_at INNER JOIN task_at AS dependency ON dependency.at = edge_at.at AND dependency.task_gid = edge_at.dependency_gid)',
  );
  return tables;
}

/** Each label a state query reads, and the fact column holding its value before a change. */
const BEFORE = {
  business: 'business',
  project: 'previous_project',
  assignee: 'previous_assignee',
  status: 'previous_status',
  due_on: 'previous_due_on',
} as const;

/**
 * Open tasks per label set at each bucket's instant, without replaying any task's history:
 * every change of state adds its new state (+1 if open) and takes away its old one (−1 if it
 * was open), so the open tasks at an instant are the sum over every change before it. Changes
 * are summed per interval between bucket instants, then each sum is carried into every later
 * bucket. Only the labels the query groups or filters by are kept, so the sums stay few.
 */
function openTaskCounts(ctx: SourceContext): string {
  const labels = (Object.keys(BEFORE) as Array<keyof typeof BEFORE>).filter((label) =>
    label === 'due_on' ? needsDueDates(ctx) : stateLabels(ctx).includes(label),
  );
  const interval = `arrayCount(a -> a <= occurred_at, {ats:${TIME_ARRAY}}) AS j`;
  const change = (sign: string, columns: string[], condition: string) =>
    `SELECT ${[interval, `${sign} AS sign`, ...columns].join(', ')} FROM facts WHERE ${and([ctx.scope, BEFORE_END, condition])}`;
  const added = change(
    '1',
    labels,
    `kind IN ('task_created', 'task_updated') AND status IN ${OPEN}`,
  );
  const removed = change(
    '-1',
    labels.map((label) => (BEFORE[label] === label ? label : `${BEFORE[label]} AS ${label}`)),
    `kind IN ('task_updated', 'task_deleted') AND previous_status IN ${OPEN}`,
  );
  const sums = `SELECT ${['j', ...labels, 'sum(sign) AS weight'].join(', ')} FROM (${added} UNION ALL ${removed}) GROUP BY ${['j', ...labels].join(', ')} HAVING weight != 0`;
  return `task_at AS (SELECT ${[bucketColumns('k'), ...labels, 'weight'].join(', ')} FROM (${sums}) ARRAY JOIN range(j + 1, length({ats:${TIME_ARRAY}}) + 1) AS k)`;
}

const needsDueDates = (ctx: SourceContext) => needs(ctx, 'due_dates');
const stateLabels = (ctx: SourceContext): string[] =>
  [...ctx.dimensions, ...ctx.filters.map((filter) => filter.dimension)].filter(
    (name) => !DIMENSIONS[name].time,
  );

/**
 * The same running sum over a rollup: its rows already hold the changes summed per slot and
 * label set (with the due dates of the tasks opened and closed, summed per date), so only the
 * slots before the last instant are read, never a fact. Slot instants (`slot_ats`) are the
 * bucket instants moved up to a slot boundary; due dates are still compared with the day of
 * the true instant. With one instant, every row read counts toward it once: each row is taken
 * as it stands, with its changes due before that day added up in place, and the state select
 * sums them (a grouping per slot and a carry into later buckets cost a third of the statement
 * on the all-time rollup). With several, changes are summed per interval between instants and
 * the due dates merged per date (one map per label set), then carried into every later bucket
 * and compared with its instant's day. Either way `overdue` is what the catalog sums, and
 * `blocked` (the blocked changes, summed the same way) where the query asks for blocked_tasks.
 */
function rollupOpenCounts(ctx: SourceContext): string {
  const labels = stateLabels(ctx);
  const due = needsDueDates(ctx);
  const overdueBefore = (day: string, dates: string) =>
    `arraySum((d, v) -> if(d < toDate(${day}, {tz:String}), v, 0), ${dates}.1, ${dates}.2)`;
  const rows = `FROM ${ctx.source} WHERE ${and([ctx.scope, `slot < {state_to:${TIME}}`])}`;
  const blocked = needs(ctx, 'blocked_at');
  if (ctx.instants === 1) {
    const overdue = `${overdueBefore(`{ats:${TIME_ARRAY}}[1]`, 'due_change')} AS overdue`;
    return `task_at AS (SELECT ${[bucketColumns('1'), ...labels, 'open_change AS weight', ...(due ? [overdue] : []), ...(blocked ? ['blocked_change AS blocked'] : [])].join(', ')} ${rows})`;
  }
  const sums = [
    `SELECT ${[`arrayCount(a -> a <= slot, {slot_ats:${TIME_ARRAY}}) AS j`, ...labels, 'sum(open_change) AS weight', ...(due ? ['sumMap(due_change) AS due'] : []), ...(blocked ? ['sum(blocked_change) AS blocked'] : [])].join(', ')}`,
    rows,
    `GROUP BY ${['j', ...labels].join(', ')}`,
    `HAVING weight != 0${due ? ' OR notEmpty(due.1)' : ''}${blocked ? ' OR blocked != 0' : ''}`,
  ].join(' ');
  const overdue = `${overdueBefore('at', 'due')} AS overdue`;
  return `task_at AS (SELECT ${[bucketColumns('k'), ...labels, 'weight', ...(due ? [overdue] : []), ...(blocked ? ['blocked'] : [])].join(', ')} FROM (${sums}) ARRAY JOIN range(j + 1, length({ats:${TIME_ARRAY}}) + 1) AS k)`;
}
