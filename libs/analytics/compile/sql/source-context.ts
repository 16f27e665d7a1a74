import { DIMENSIONS, type DimensionName, METRICS, type MetricName } from '../../catalog/catalog.ts';
import { filterConditions, type QueryFilter } from '../../parse/query-filters.ts';
import type { WeekStart } from '../../period/period.ts';
import type { SourceName } from '../../sources/rollups.ts';
import type { SqlValue } from './sql-value.ts';

/** Pieces shared by every source of one query. Values are bound: only names reach the text. */
export interface SourceContext {
  dimensions: DimensionName[];
  metrics: MetricName[];
  filters: QueryFilter[];
  /** `business IN {businesses:…}` when the caller is restricted, else null. */
  scope: SqlValue | null;
  /** Whether other sources share the result, so this one fills their columns with neutrals. */
  union: boolean;
  /** The table the planner chose: facts, or a rollup. */
  source: SourceName;
  /** How many instants state is read at (one per time bucket; one without a time dimension). */
  instants: number;
  /** The daily rollup the state's whole days before `state_base` are read from, if any. */
  stateBase?: SourceName | null;
  /** The day `week` buckets start on. */
  weekStart: WeekStart;
}

export const onRollup = (ctx: SourceContext) => ctx.source !== 'facts';

/** Whether any requested metric is measured on task states. */
export const readsState = (ctx: SourceContext) =>
  ctx.metrics.some((name) => METRICS[name].source === 'state');

/** The labels a state query keeps: those it groups or filters by, time aside. */
export const stateLabels = (ctx: SourceContext): DimensionName[] =>
  [...ctx.dimensions, ...filterConditions(ctx.filters).map((filter) => filter.dimension)].filter(
    (name) => !DIMENSIONS[name].time,
  );

/** The caller's businesses, `business IN {businesses:Array(String)}`, or null when unrestricted. */
export const scope = (ctx: SourceContext): SqlValue | null => ctx.scope;
