/**
 * Every metric and dimension a query may name, mapped to ClickHouse SQL. This is the only
 * place SQL identifiers for analytics come from; request text never reaches the SQL. The same
 * entries feed validation, `metadata.columns`, `GET /api/v1/query/catalog` and the API document.
 */

/** The day `week` buckets and the week periods start on. */
export const WEEK_STARTS = ['monday', 'sunday'] as const;
export type WeekStart = (typeof WEEK_STARTS)[number];
export const DEFAULT_WEEK_START: WeekStart = 'monday';

/**
 * Where a metric is computed:
 * - `flow`: an aggregate over the facts that happened inside the period (or time bucket);
 * - `state`: the tasks' state at the period's (or bucket's) end, capped at now.
 */
export type MetricSource = 'flow' | 'state';

/**
 * What a metric's SQL reads besides its source's rows: tables built by `commonTables`
 * (`completed_tasks`, `blocked_at`), or each open task's due date (`due_dates`). On a rollup,
 * `completed_tasks` is the per-row count `completed_in_bucket`, which only rollups keeping
 * completions (`RollupDef.completions`) have, and `blocked_at` the running sum `blocked` of the
 * blocked changes, which only rollups keeping them (`RollupDef.blocked`) have. `completion_times`:
 * on a rollup, the completions' work and blocked times (`started`, `timed`) on their rows,
 * which every rollup answering flows keeps. `task_rows`: one
 * `task_at` row per open task with its `task_created_at`, replayed from facts (no rollup keeps it).
 * `live_tasks`: `task_at` holds the tasks not deleted in every status as `live`, beside `weight`
 * (the open ones), so its rows cover closed tasks too; on a rollup, the running sum of
 * `live_change`, which every rollup keeps.
 */
export type MetricNeed =
  | 'completed_tasks'
  | 'blocked_at'
  | 'due_dates'
  | 'completion_times'
  | 'task_rows'
  | 'live_tasks';

export interface MetricDef {
  description: string;
  unit: 'tasks' | 'dependencies' | 'ratio' | 'hours' | 'people';
  /** `number` metrics are null where undefined (no completed task to average). */
  type: 'integer' | 'number';
  source: MetricSource;
  /**
   * The aggregate per source. Flow: over `facts` rows, or over rollup rows (`sum(created)`, …).
   * State: over `task_at` rows, each standing for `weight` open tasks with the same labels at
   * the same instant. `rollup: null`: only facts answer it exactly (the description says why).
   */
  sql: { facts: string; rollup: string | null };
  needs: readonly MetricNeed[];
  /**
   * What a row holds for this metric where another part of the same statement computes it, and
   * what a bucket with nothing in it reads (a zero-filled bucket, a comparison bucket without
   * facts): 0 for counts, NULL for averages, percentiles and rates, undefined there.
   */
  neutral: '0' | 'NULL';
}

export interface DimensionDef {
  description: string;
  /** `date`: YYYY-MM-DD; `date-time`: RFC 3339 with the zone's offset; `string`: a label. */
  type: 'date' | 'date-time' | 'string';
  /**
   * The stored value that means "no label" (a task without a project): answered and filtered
   * as JSON null. Absent where every row has a label.
   */
  none?: string;
  /**
   * A time dimension's SQL is a function of the instant it buckets (and, for weeks, of the day
   * they start on); `{tz:String}` is bound.
   */
  time: boolean;
  sql: (instant: string, weekStart?: WeekStart) => string;
}

/** Creation → completion of each task_completed fact, in hours. */
const CYCLE_HOURS =
  '(toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at)) / 3600000';
const COMPLETED = "kind = 'task_completed'";
/** Undefined (null) rather than 0 or NaN when no task was completed. */
const cycle = (aggregate: string) =>
  `if(countIf(${COMPLETED}) = 0, NULL, ${aggregate}(${CYCLE_HOURS}, ${COMPLETED}))`;
/**
 * Rollups keep every cycle time of their slot in one exact quantile state (stored at level
 * 0.5); merged at any level it interpolates exactly as the facts' own quantile does.
 */
const rollupCycle = (level: number) =>
  `if(sum(completed) = 0, NULL, quantileExactInclusiveMerge(${level})(cycle_hours))`;

/** A completion whose task had moved to in_progress: the write side records when it first did. */
const STARTED = `${COMPLETED} AND started_at IS NOT NULL`;
/** First move to in_progress → completion, in hours. */
const WORK_HOURS =
  '(toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(assumeNotNull(started_at))) / 3600000';
/** Undefined (null) when no completion in the row had been in progress. */
const work = (aggregate: string) =>
  `if(countIf(${STARTED}) = 0, NULL, ${aggregate}(${WORK_HOURS}, ${STARTED}))`;
/** An open task's age at the state's instant, in hours (one `task_at` row per task). */
const AGE_HOURS =
  '(toUnixTimestamp64Milli(at) - toUnixTimestamp64Milli(task_created_at)) / 3600000';
/** Over the open tasks' rows only: beside tasks_in_status, `task_at` holds closed tasks too. */
const age = (aggregate: string) =>
  `if(sum(weight) = 0, NULL, ${aggregate}(${AGE_HOURS}, weight = 1))`;

/** A completion whose task's blocked time is known (recorded by the write side). */
const TIMED = `${COMPLETED} AND blocked_ms IS NOT NULL`;
const CYCLE_MS = 'toUnixTimestamp64Milli(occurred_at) - toUnixTimestamp64Milli(task_created_at)';

/** Rollups keep every work time of their slot in one exact quantile state, as for cycle times. */
const rollupWork = (level: number) =>
  `if(sum(started) = 0, NULL, quantileExactInclusiveMerge(${level})(work_hours))`;

export const METRICS = {
  tasks_created: {
    description: 'Tasks created in the period.',
    unit: 'tasks',
    type: 'integer',
    source: 'flow',
    sql: {
      facts: "countIf(kind = 'task_created')",
      rollup: 'sum(created)',
    },
    needs: [],
    neutral: '0',
  },
  tasks_completed: {
    description:
      'Completions in the period (a task completed, reopened and completed counts twice).',
    unit: 'tasks',
    type: 'integer',
    source: 'flow',
    sql: {
      facts: `countIf(${COMPLETED})`,
      rollup: 'sum(completed)',
    },
    needs: [],
    neutral: '0',
  },
  tasks_cancelled: {
    description: 'Tasks that became cancelled in the period (created cancelled included).',
    unit: 'tasks',
    type: 'integer',
    source: 'flow',
    sql: {
      facts:
        "countIf(kind IN ('task_created', 'task_updated') AND status = 'cancelled' AND previous_status != 'cancelled')",
      rollup: 'sum(cancelled)',
    },
    needs: [],
    neutral: '0',
  },
  completion_rate: {
    description:
      'Share (0–1) of the tasks created in the row’s period or time bucket that were completed before that same period or bucket ends (so a row with no completions has rate 0); null when none were created. Grouped and filtered by the labels the task was created with.',
    unit: 'ratio',
    type: 'number',
    source: 'flow',
    // Facts: completed_tasks holds the tasks completed in the period in the bucket they were
    // created in; a creation counts when its task is one of them. Rollups: each row counts its
    // creations first completed within the row's bucket (completed_in_bucket, from completed_by).
    sql: {
      facts:
        "if(countIf(kind = 'task_created') = 0, NULL, countIf(kind = 'task_created' AND task_gid IN completed_tasks) / countIf(kind = 'task_created'))",
      rollup: 'if(sum(created) = 0, NULL, sum(completed_in_bucket) / sum(created))',
    },
    needs: ['completed_tasks'],
    neutral: 'NULL',
  },
  avg_cycle_time_hours: {
    description: 'Mean hours from creation to completion over the completions in the period.',
    unit: 'hours',
    type: 'number',
    source: 'flow',
    sql: {
      facts: cycle('avgIf'),
      rollup: 'if(sum(completed) = 0, NULL, sum(cycle_hours_sum) / sum(completed))',
    },
    needs: [],
    neutral: 'NULL',
  },
  p50_cycle_time_hours: {
    description:
      'Median hours from creation to completion over the completions in the period (linear interpolation).',
    unit: 'hours',
    type: 'number',
    source: 'flow',
    sql: {
      facts: cycle('quantileExactInclusiveIf(0.5)'),
      rollup: rollupCycle(0.5),
    },
    needs: [],
    neutral: 'NULL',
  },
  p85_cycle_time_hours: {
    description:
      '85th percentile of hours from creation to completion over the completions in the period (linear interpolation).',
    unit: 'hours',
    type: 'number',
    source: 'flow',
    sql: {
      facts: cycle('quantileExactInclusiveIf(0.85)'),
      rollup: rollupCycle(0.85),
    },
    needs: [],
    neutral: 'NULL',
  },
  p90_cycle_time_hours: {
    description:
      '90th percentile of hours from creation to completion over the completions in the period (linear interpolation).',
    unit: 'hours',
    type: 'number',
    source: 'flow',
    sql: {
      facts: cycle('quantileExactInclusiveIf(0.9)'),
      rollup: rollupCycle(0.9),
    },
    needs: [],
    neutral: 'NULL',
  },
  p95_cycle_time_hours: {
    description:
      '95th percentile of hours from creation to completion over the completions in the period (linear interpolation).',
    unit: 'hours',
    type: 'number',
    source: 'flow',
    sql: {
      facts: cycle('quantileExactInclusiveIf(0.95)'),
      rollup: rollupCycle(0.95),
    },
    needs: [],
    neutral: 'NULL',
  },
  avg_work_time_hours: {
    description: `Mean hours from the task’s first move to in_progress to its completion, over the completions in the period whose task had been in progress (others are left out).`,
    unit: 'hours',
    type: 'number',
    source: 'flow',
    sql: {
      facts: work('avgIf'),
      rollup: 'if(sum(started) = 0, NULL, sum(work_hours_sum) / sum(started))',
    },
    needs: ['completion_times'],
    neutral: 'NULL',
  },
  p50_work_time_hours: {
    description: `Median hours from the task’s first move to in_progress to its completion, over the completions in the period whose task had been in progress (linear interpolation).`,
    unit: 'hours',
    type: 'number',
    source: 'flow',
    sql: {
      facts: work('quantileExactInclusiveIf(0.5)'),
      rollup: rollupWork(0.5),
    },
    needs: ['completion_times'],
    neutral: 'NULL',
  },
  p85_work_time_hours: {
    description: `85th percentile of hours from the task’s first move to in_progress to its completion, over the completions in the period whose task had been in progress (linear interpolation).`,
    unit: 'hours',
    type: 'number',
    source: 'flow',
    sql: {
      facts: work('quantileExactInclusiveIf(0.85)'),
      rollup: rollupWork(0.85),
    },
    needs: ['completion_times'],
    neutral: 'NULL',
  },
  avg_blocked_hours: {
    description:
      'Mean hours the tasks completed in the period spent blocked (open with at least one open dependency) before each completion, over the completions whose blocked time is recorded (tasks created before it was are left out).',
    unit: 'hours',
    type: 'number',
    source: 'flow',
    sql: {
      facts: `if(countIf(${TIMED}) = 0, NULL, sumIf(assumeNotNull(blocked_ms), ${TIMED}) / countIf(${TIMED}) / 3600000)`,
      rollup: 'if(sum(timed) = 0, NULL, sum(blocked_ms_sum) / sum(timed) / 3600000)',
    },
    needs: ['completion_times'],
    neutral: 'NULL',
  },
  flow_efficiency: {
    description:
      'Share (0–1) of the cycle time of the tasks completed in the period that they were not blocked: 1 − their blocked hours ÷ their cycle hours, summed over the completions whose blocked time is recorded; null when there are none (or their cycle times sum to 0).',
    unit: 'ratio',
    type: 'number',
    source: 'flow',
    sql: {
      facts: `if(sumIf(${CYCLE_MS}, ${TIMED}) = 0, NULL, 1 - sumIf(assumeNotNull(blocked_ms), ${TIMED}) / sumIf(${CYCLE_MS}, ${TIMED}))`,
      rollup:
        'if(sum(timed_cycle_ms_sum) = 0, NULL, 1 - sum(blocked_ms_sum) / sum(timed_cycle_ms_sum))',
    },
    needs: ['completion_times'],
    neutral: 'NULL',
  },
  dependencies_added: {
    description: 'Dependency edges added in the period.',
    unit: 'dependencies',
    type: 'integer',
    source: 'flow',
    sql: {
      facts: "countIf(kind = 'dependency_added')",
      rollup: 'sum(dependencies_added)',
    },
    needs: [],
    neutral: '0',
  },
  dependencies_removed: {
    description: 'Dependency edges removed in the period.',
    unit: 'dependencies',
    type: 'integer',
    source: 'flow',
    sql: {
      facts: "countIf(kind = 'dependency_removed')",
      rollup: 'sum(dependencies_removed)',
    },
    needs: [],
    neutral: '0',
  },
  active_assignees: {
    description: 'Distinct assignees of the tasks that changed in the period.',
    unit: 'people',
    type: 'integer',
    source: 'flow',
    sql: {
      facts: "uniqExactIf(assignee, assignee != '')",
      rollup: 'uniqExactMerge(assignees)',
    },
    needs: [],
    neutral: '0',
  },
  open_tasks: {
    description: 'Tasks open or in progress at the end of the period (now, if it ends later).',
    unit: 'tasks',
    type: 'integer',
    source: 'state',
    sql: {
      facts: 'sum(weight)',
      rollup: 'sum(weight)',
    },
    needs: [],
    neutral: '0',
  },
  tasks_in_status: {
    description:
      'Tasks in each status at the end of the period (now, if it ends later), deleted ones left out: every status counts, so completed and cancelled tasks accumulate. By `status` with a time dimension it draws a cumulative flow diagram. Every change of a task adds it under its new labels and takes it away under its old ones, so a rollup sums those changes like open_tasks.',
    unit: 'tasks',
    type: 'integer',
    source: 'state',
    sql: {
      facts: 'sum(live)',
      rollup: 'sum(live)',
    },
    needs: ['live_tasks'],
    neutral: '0',
  },
  avg_age_hours: {
    description:
      'Mean age in hours (the period’s end, or now, minus creation) of the tasks open or in progress at the end of the period: aging work in progress. Read from facts, replaying each task’s history (the rollups keep counts, not creation instants).',
    unit: 'hours',
    type: 'number',
    source: 'state',
    sql: { facts: age('avgIf'), rollup: null },
    needs: ['task_rows'],
    neutral: 'NULL',
  },
  p85_age_hours: {
    description:
      '85th percentile of the ages in hours of the tasks open or in progress at the end of the period (linear interpolation). Read from facts, replaying each task’s history (the rollups keep counts, not creation instants).',
    unit: 'hours',
    type: 'number',
    source: 'state',
    sql: {
      facts: age('quantileExactInclusiveIf(0.85)'),
      rollup: null,
    },
    needs: ['task_rows'],
    neutral: 'NULL',
  },
  overdue_tasks: {
    description:
      'Open tasks at the end of the period whose due date is before that day (in the query time zone).',
    unit: 'tasks',
    type: 'integer',
    source: 'state',
    sql: {
      facts: 'sumIf(weight, due_on < toDate(at, {tz:String}))',
      rollup: 'sum(overdue)',
    },
    needs: ['due_dates'],
    neutral: '0',
  },
  blocked_tasks: {
    description:
      'Open tasks at the end of the period with at least one open dependency. Each write records which tasks it blocked or unblocked (its own task and, when a task opens, closes or is deleted, the tasks depending on it), so a rollup sums those changes like open_tasks; where no rollup keeping those changes answers the query (by assignee, or with bucket boundaries off UTC days) it is read from facts, replaying task and dependency histories.',
    unit: 'tasks',
    type: 'integer',
    source: 'state',
    sql: {
      facts: 'sumIf(weight, blocked = 1)',
      rollup: 'sum(blocked)',
    },
    needs: ['blocked_at'],
    neutral: '0',
  },
} as const satisfies Record<string, MetricDef>;

const label = (name: string, description: string, none?: string): DimensionDef => ({
  description,
  type: 'string',
  ...(none === undefined ? {} : { none }),
  time: false,
  sql: () => name,
});

/** `YYYY-MM-DDTHH:00:00±HH:MM`: the offset tells apart the two 01:00 of a night the clocks go back. */
function hourLabel(t: string): string {
  const text = `formatDateTime(toStartOfHour(${t}, {tz:String}), '%Y-%m-%dT%H:%i:%S%z', {tz:String})`;
  return `concat(substring(${text}, 1, 22), ':', substring(${text}, 23, 2))`;
}

export const DIMENSIONS = {
  hour: {
    description:
      'Hour in the query time zone, named by its start with the zone offset (YYYY-MM-DDTHH:00:00+HH:MM).',
    type: 'date-time',
    time: true,
    sql: hourLabel,
  },
  day: {
    description: 'Calendar day in the query time zone (YYYY-MM-DD).',
    type: 'date',
    time: true,
    sql: (t) => `toString(toDate(${t}, {tz:String}))`,
  },
  week: {
    description:
      'Week in the query time zone, named by its first day (YYYY-MM-DD): a Monday (ISO weeks), or a Sunday with `week_start: sunday`.',
    type: 'date',
    time: true,
    // Mode 0 of toStartOfWeek: weeks start on Sunday.
    sql: (t, weekStart = 'monday') =>
      weekStart === 'sunday'
        ? `toString(toStartOfWeek(${t}, 0, {tz:String}))`
        : `toString(toMonday(${t}, {tz:String}))`,
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
  project: label('project', "Task's project (null when none).", ''),
  assignee: label('assignee', "Task's assignee (null when none).", ''),
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

/** The time dimension a query (or a source of it) groups by, if any: at most one is allowed. */
export const timeDimension = (of: { readonly dimensions: readonly DimensionName[] }) =>
  of.dimensions.find((name) => DIMENSIONS[name].time);

/** Whether any metric of a query (or a source of it) reads `need` besides its source's rows. */
export const needs = (of: { readonly metrics: readonly MetricName[] }, need: MetricNeed) =>
  of.metrics.some((name) => (METRICS[name].needs as readonly MetricNeed[]).includes(need));

/** The stored value a dimension uses for "no label", answered as null; undefined if it has none. */
export const noneLabel = (name: DimensionName): string | undefined =>
  (DIMENSIONS[name] as DimensionDef).none;

/** What a metric reads in a bucket with nothing in it: its neutral value. */
export const emptyValue = (name: MetricName): 0 | null =>
  METRICS[name].neutral === '0' ? 0 : null;
