import type { ResolvedPeriod } from '../period/period.ts';
import { ROLLUPS, type RollupDef, type RollupName, type SourceName } from '../sources/rollups.ts';
import type { ValueDimension } from './dimension-values.schemas.ts';

/**
 * Every source that counts a dimension's values exactly over a period (null: all time, without
 * bounds), the cheapest first, facts always last. Each rollup row's `facts` counts the facts
 * that carry its labels in its slot, so a rollup that keeps the dimension answers exactly
 * without a period, or when the period's ends fall on its slot boundaries: all time (from the epoch up to now or later) on the one slot of
 * `rollup_labels_all`, whole UTC months on the monthly one, whole UTC days or quarter hours on
 * the others. Like the query planner, it takes the future to hold no facts.
 */
export function valueSources(
  dimension: ValueDimension,
  period: ResolvedPeriod | null,
  ready: ReadonlySet<RollupName>,
  now: Date,
): SourceName[] {
  const answering = (ROLLUPS as readonly RollupDef[])
    .filter(
      (rollup) =>
        ready.has(rollup.table as RollupName) &&
        (rollup.labels as readonly string[]).includes(dimension) &&
        covers(rollup, period, now),
    )
    .sort((a, b) => cost(a) - cost(b));
  return [...answering.map((rollup) => rollup.table as RollupName), 'facts'];
}

function covers(rollup: RollupDef, period: ResolvedPeriod | null, now: Date): boolean {
  // Without a period every row counts, whatever its slot.
  if (period === null) return true;
  const { slotMs } = rollup;
  if (slotMs === 'all') return period.from.getTime() === 0 && period.to >= now;
  if (slotMs === 'month') return monthStart(period.from) && monthStart(period.to);
  return period.from.getTime() % slotMs === 0 && period.to.getTime() % slotMs === 0;
}

const monthStart = (instant: Date): boolean =>
  instant.getTime() === Date.UTC(instant.getUTCFullYear(), instant.getUTCMonth(), 1);

/**
 * Rows a rollup holds per business, roughly: the longer its slot the fewer, and every label kept
 * beside the dimension multiplies them.
 */
function cost(rollup: RollupDef): number {
  const { slotMs } = rollup;
  const slots = slotMs === 'all' ? 0 : slotMs === 'month' ? 1 : slotMs >= 86_400_000 ? 2 : 3;
  return slots * 10 + rollup.labels.length;
}
