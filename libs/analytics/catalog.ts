/**
 * Every metric and dimension a query may name, mapped to ClickHouse SQL. This is the only
 * place SQL identifiers for analytics come from; request text never reaches the SQL. The same
 * entries feed validation, `metadata.columns` and the API description.
 */
export interface MetricDef {
  description: string;
  unit: 'tasks' | 'dependencies' | 'ratio' | 'hours' | 'people';
  type: 'integer' | 'number';
  /** An aggregate over `facts` rows inside the period. */
  sql: string;
}

export interface DimensionDef {
  description: string;
  type: 'date' | 'string';
  /** Grouping expression; `{tz:String}` is bound to the request's time zone. */
  sql: string;
}

export const METRICS = {
  tasks_created: {
    description: 'Tasks created in the period.',
    unit: 'tasks',
    type: 'integer',
    sql: "countIf(kind = 'task_created')",
  },
  tasks_completed: {
    description: 'Tasks completed in the period.',
    unit: 'tasks',
    type: 'integer',
    sql: "countIf(kind = 'task_completed')",
  },
  dependencies_added: {
    description: 'Dependency edges added in the period.',
    unit: 'dependencies',
    type: 'integer',
    sql: "countIf(kind = 'dependency_added')",
  },
} as const satisfies Record<string, MetricDef>;

export const DIMENSIONS = {
  day: {
    description: 'Calendar day in the query time zone (YYYY-MM-DD).',
    type: 'date',
    sql: 'toString(toDate(occurred_at, {tz:String}))',
  },
  week: {
    description: 'ISO week in the query time zone, named by its Monday (YYYY-MM-DD).',
    type: 'date',
    sql: 'toString(toMonday(occurred_at, {tz:String}))',
  },
  month: {
    description: 'Calendar month in the query time zone, named by its first day (YYYY-MM-DD).',
    type: 'date',
    sql: 'toString(toStartOfMonth(occurred_at, {tz:String}))',
  },
  business: { description: 'Business the task belongs to.', type: 'string', sql: 'business' },
  project: { description: "Task's project ('' when none).", type: 'string', sql: 'project' },
  assignee: { description: "Task's assignee ('' when none).", type: 'string', sql: 'assignee' },
} as const satisfies Record<string, DimensionDef>;

export type MetricName = keyof typeof METRICS;
export type DimensionName = keyof typeof DIMENSIONS;

export const METRIC_NAMES = Object.keys(METRICS) as MetricName[];
export const DIMENSION_NAMES = Object.keys(DIMENSIONS) as DimensionName[];
