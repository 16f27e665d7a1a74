/**
 * Every metric and dimension a query may name, mapped to ClickHouse SQL. This is the only
 * place SQL identifiers for analytics come from; request text never reaches the SQL. The same
 * entries feed validation, `metadata.columns`, `GET /api/v1/query/catalog` and the API document.
 */

/**
 * Where a metric is computed:
 * - `flow`: an aggregate over the facts that happened inside the period (or time bucket);
 * - `state`: the tasks' state at the period's (or bucket's) end, capped at now.
 */
export type MetricSource = 'flow' | 'state';

export interface MetricDef {
  description: string;
  unit: 'tasks' | 'dependencies' | 'ratio' | 'hours' | 'people';
  /** `number` metrics are null where undefined (no completed task to average). */
  type: 'integer' | 'number';
  source: MetricSource;
  /**
   * Flow: an aggregate over `facts` rows. State: an aggregate over `task_at` rows, each standing
   * for `weight` open tasks with the same labels at the same instant.
   */
  sql: string;
}

export interface DimensionDef {
  description: string;
  type: 'date' | 'string';
  /** A time dimension's SQL is a function of the instant it buckets; `{tz:String}` is bound. */
  time: boolean;
  sql: (instant: string) => string;
}

/** Creation → completion of each task_completed fact, in hours. */
const CYCLE_HOURS =
  '(toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at)) / 3600000';
const COMPLETED = "kind = 'task_completed'";
/** Undefined (null) rather than 0 or NaN when no task was completed. */
const cycle = (aggregate: string) =>
  `if(countIf(${COMPLETED}) = 0, NULL, ${aggregate}(${CYCLE_HOURS}, ${COMPLETED}))`;

export const METRICS = {
  tasks_created: {
    description: 'Tasks created in the period.',
    unit: 'tasks',
    type: 'integer',
    source: 'flow',
    sql: "countIf(kind = 'task_created')",
  },
  tasks_completed: {
    description:
      'Completions in the period (a task completed, reopened and completed counts twice).',
    unit: 'tasks',
    type: 'integer',
    source: 'flow',
    sql: `countIf(${COMPLETED})`,
  },
  tasks_cancelled: {
    description: 'Tasks that became cancelled in the period (created cancelled included).',
    unit: 'tasks',
    type: 'integer',
    source: 'flow',
    sql: "countIf(kind IN ('task_created', 'task_updated') AND status = 'cancelled' AND previous_status != 'cancelled')",
  },
  completion_rate: {
    description:
      'Share (0–1) of the tasks created in the period that were completed before its end; 0 when none were created.',
    unit: 'ratio',
    type: 'number',
    source: 'flow',
    sql: "if(countIf(kind = 'task_created') = 0, 0, countIf(kind = 'task_created' AND task_gid IN completed_tasks) / countIf(kind = 'task_created'))",
  },
  avg_cycle_time_hours: {
    description: 'Mean hours from creation to completion over the completions in the period.',
    unit: 'hours',
    type: 'number',
    source: 'flow',
    sql: cycle('avgIf'),
  },
  p50_cycle_time_hours: {
    description:
      'Median hours from creation to completion over the completions in the period (linear interpolation).',
    unit: 'hours',
    type: 'number',
    source: 'flow',
    sql: cycle('quantileExactInclusiveIf(0.5)'),
  },
  p90_cycle_time_hours: {
    description:
      '90th percentile of hours from creation to completion over the completions in the period (linear interpolation).',
    unit: 'hours',
    type: 'number',
    source: 'flow',
    sql: cycle('quantileExactInclusiveIf(0.9)'),
  },
  dependencies_added: {
    description: 'Dependency edges added in the period.',
    unit: 'dependencies',
    type: 'integer',
    source: 'flow',
    sql: "countIf(kind = 'dependency_added')",
  },
  dependencies_removed: {
    description: 'Dependency edges removed in the period.',
    unit: 'dependencies',
    type: 'integer',
    source: 'flow',
    sql: "countIf(kind = 'dependency_removed')",
  },
  active_assignees: {
    description: 'Distinct assignees of the tasks that changed in the period.',
    unit: 'people',
    type: 'integer',
    source: 'flow',
    sql: "uniqExactIf(assignee, assignee != '')",
  },
  open_tasks: {
    description: 'Tasks open or in progress at the end of the period (now, if it ends later).',
    unit: 'tasks',
    type: 'integer',
    source: 'state',
    sql: 'sum(weight)',
  },
  overdue_tasks: {
    description:
      'Open tasks at the end of the period whose due date is before that day (in the query time zone).',
    unit: 'tasks',
    type: 'integer',
    source: 'state',
    sql: 'sumIf(weight, due_on < toDate(at, {tz:String}))',
  },
  blocked_tasks: {
    description: 'Open tasks at the end of the period with at least one open dependency.',
    unit: 'tasks',
    type: 'integer',
    source: 'state',
    sql: 'sumIf(weight, blocked = 1)',
  },
} as const satisfies Record<string, MetricDef>;

const label = (name: string, description: string): DimensionDef => ({
  description,
  type: 'string',
  time: false,
  sql: () => name,
});

export const DIMENSIONS = {
  day: {
    description: 'Calendar day in the query time zone (YYYY-MM-DD).',
    type: 'date',
    time: true,
    sql: (t) => `toString(toDate(${t}, {tz:String}))`,
  },
  week: {
    description: 'ISO week in the query time zone, named by its Monday (YYYY-MM-DD).',
    type: 'date',
    time: true,
    sql: (t) => `toString(toMonday(${t}, {tz:String}))`,
  },
  month: {
    description: 'Calendar month in the query time zone, named by its first day (YYYY-MM-DD).',
    type: 'date',
    time: true,
    sql: (t) => `toString(toStartOfMonth(${t}, {tz:String}))`,
  },
  quarter: {
    description: 'Calendar quarter in the query time zone, named by its first day (YYYY-MM-DD).',
    type: 'date',
    time: true,
    sql: (t) => `toString(toStartOfQuarter(${t}, {tz:String}))`,
  },
  business: label('business', 'Business the task belongs to.'),
  project: label('project', "Task's project ('' when none)."),
  assignee: label('assignee', "Task's assignee ('' when none)."),
  status: label(
    'status',
    "Task's status after the change (flow metrics) or at the period's end (state metrics).",
  ),
} as const satisfies Record<string, DimensionDef>;

export type MetricName = keyof typeof METRICS;
export type DimensionName = keyof typeof DIMENSIONS;

export const METRIC_NAMES = Object.keys(METRICS) as MetricName[];
export const DIMENSION_NAMES = Object.keys(DIMENSIONS) as DimensionName[];
export const TIME_DIMENSIONS = DIMENSION_NAMES.filter((name) => DIMENSIONS[name].time);
