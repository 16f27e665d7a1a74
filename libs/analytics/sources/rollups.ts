import type { DimensionName } from '../catalog/catalog.ts';

/**
 * The pre-aggregated tables kept beside facts (`sql/clickhouse/0004`–`0080`), coarsest first:
 * the planner takes the first one that answers a query exactly. Each row is one UTC slot ×
 * business × its labels, holding flow counts, signed changes of the open count (with the due
 * dates of the tasks opened and closed) and of the count of tasks not deleted (`live_change`),
 * and an exact quantile state of cycle times.
 */
export interface RollupDef {
  /** Table name, and what `metadata.source` reports. */
  table: string;
  /**
   * Slot length: every boundary a query draws must fall on a multiple of it (in UTC). `month`:
   * calendar months in UTC, which only state at a month's start or at "now" can use. `all`: one
   * slot for all time, which only state at "now" can use.
   */
  slotMs: number | 'month' | 'all';
  /** Labels kept besides the slot; a query grouping or filtering by another needs facts. */
  labels: readonly DimensionName[];
  /**
   * Whether it keeps `completed_by`: per creation slot and labels, the slots the tasks were
   * first completed in, which metrics needing `completed_tasks` (completion_rate) read.
   */
  completions?: boolean;
  /** Whether it keeps `blocked_change`, the signed changes of blocked_tasks the write side records. */
  blocked?: boolean;
  /**
   * A daily rollup keeping every column and label this one's state reads: the whole UTC days
   * before a state query's first instant are read there (a row a day, not 96), this one only
   * from the last UTC midnight before that instant.
   */
  stateBase?: string;
}

const MINUTE = 60_000;
const DAY = 1_440 * MINUTE;

export const ROLLUPS = [
  { table: 'rollup_business_day', slotMs: DAY, labels: ['business', 'status'] },
  {
    table: 'rollup_projects_blocked_day',
    slotMs: DAY,
    labels: ['business', 'project', 'status'],
    completions: true,
    blocked: true,
  },
  {
    table: 'rollup_business_blocked_15m',
    slotMs: 15 * MINUTE,
    labels: ['business', 'status'],
    completions: true,
    blocked: true,
    stateBase: 'rollup_projects_blocked_day',
  },
  {
    table: 'rollup_labels_all',
    slotMs: 'all',
    labels: ['business', 'project', 'assignee', 'status'],
  },
  {
    table: 'rollup_labels_month',
    slotMs: 'month',
    labels: ['business', 'project', 'assignee', 'status'],
  },
  {
    table: 'rollup_labels_day',
    slotMs: DAY,
    labels: ['business', 'project', 'assignee', 'status'],
  },
] as const satisfies readonly RollupDef[];

export type RollupName = (typeof ROLLUPS)[number]['table'];
export type SourceName = RollupName | 'facts';

export const ROLLUP_NAMES: RollupName[] = ROLLUPS.map((rollup) => rollup.table);

/** Rollups keeping blocked changes, which facts loaded without the write side do not carry. */
export const BLOCKED_ROLLUP_NAMES: RollupName[] = ROLLUPS.filter(
  (rollup) => (rollup as RollupDef).blocked === true,
).map((rollup) => rollup.table);

export const rollupDef = (name: RollupName): RollupDef =>
  ROLLUPS.find((rollup) => rollup.table === name) as RollupDef;

/**
 * The daily rollup `source`'s state may start from (RollupDef.stateBase), when it holds every
 * fact; null otherwise, and for every other source.
 */
export function stateBaseOf(source: SourceName, ready: ReadonlySet<RollupName>): RollupName | null {
  if (source === 'facts') return null;
  const base = rollupDef(source).stateBase as RollupName | undefined;
  return base !== undefined && ready.has(base) ? base : null;
}
