import { DIMENSIONS, type DimensionName, METRICS, needs } from '../catalog/catalog.ts';
import { filterDimensions } from '../parse/query-filters.ts';
import type { AnalyticsQuery } from '../parse/query-parser.ts';
import type { ResolvedPeriod } from '../period/period.ts';
import { offsetsAligned } from '../period/zone-offsets.ts';
import { ROLLUPS, type RollupDef, type RollupName, type SourceName } from './rollups.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * The source decider (Plausible's `table_decider.ex`), between period resolution and
 * compilation: every source that answers the query exactly, coarsest first, facts always last.
 * The first is what runs; tests run them all.
 *
 * A rollup answers exactly when it is complete (`ready`), carries every metric (completion_rate
 * only where it keeps completions, blocked_tasks where it keeps blocked changes) and every label the query groups or filters by, and every
 * boundary the query draws falls on one of its slot boundaries: the period's ends, and with a
 * time dimension every local bucket boundary, which holds when the zone's offset stays a
 * multiple of the slot. State read at "now" is read at the end of now's slot: the future holds
 * no facts.
 */
export function exactSources(
  query: AnalyticsQuery,
  period: ResolvedPeriod,
  ready: ReadonlySet<RollupName>,
  now: Date,
): SourceName[] {
  const answering = ROLLUPS.filter(
    (rollup) => ready.has(rollup.table) && answers(rollup, query, period, now),
  );
  return [...answering.map((rollup) => rollup.table), 'facts'];
}

function answers(
  rollup: RollupDef,
  query: AnalyticsQuery,
  period: ResolvedPeriod,
  now: Date,
): boolean {
  if (query.metrics.some((name) => METRICS[name].sql.rollup === null)) return false;
  if (needs(query, 'completed_tasks') && !rollup.completions) return false;
  if (needs(query, 'blocked_at') && !rollup.blocked) return false;
  // Any condition of a group counts: a rollup answers an OR only if it keeps every label in it.
  const named = [...query.dimensions, ...filterDimensions(query.filters)];
  const labels = named.filter((name) => !DIMENSIONS[name].time);
  if (labels.some((name) => !(rollup.labels as readonly DimensionName[]).includes(name))) {
    return false;
  }
  const times = named.filter((name) => DIMENSIONS[name].time);
  const { slotMs } = rollup;
  const stateOnly =
    times.length === 0 && query.metrics.every((name) => METRICS[name].source === 'state');
  if (slotMs === 'all') return stateOnly && period.to.getTime() >= now.getTime();
  if (slotMs === 'month') {
    // Only state at one instant, and only where summing whole months is exact: the instant is
    // a month's start, or now (the rest of now's month holds no facts yet).
    if (!stateOnly) return false;
    return period.to.getTime() >= now.getTime() || monthCeiling(period.to) === period.to.getTime();
  }
  const aligned = (instant: Date) => instant.getTime() % slotMs === 0;
  if (!aligned(period.from) || !aligned(period.to)) return false;
  if (times.length === 0) return true;
  if (times.some((name) => granularity(name) % slotMs !== 0)) return false;
  return offsetsAligned(period.timezone, period.from, period.to, slotMs);
}

/** The shortest local span a time dimension's buckets can have between two boundaries. */
const granularity = (name: DimensionName): number => ((name as string) === 'hour' ? HOUR : DAY);

/**
 * `instant` moved forward to the next slot boundary (unchanged when it is one). The one slot of
 * `all` starts at the epoch and never ends: any later instant reads all of it, as state at now
 * (the only state it answers) must.
 */
export function slotCeiling(instant: Date, slotMs: RollupDef['slotMs']): Date {
  if (slotMs === 'all') return instant;
  if (slotMs === 'month') return new Date(monthCeiling(instant));
  return new Date(Math.ceil(instant.getTime() / slotMs) * slotMs);
}

/** The first UTC month start at or after `instant`, in epoch milliseconds. */
function monthCeiling(instant: Date): number {
  const start = Date.UTC(instant.getUTCFullYear(), instant.getUTCMonth(), 1);
  return start === instant.getTime()
    ? start
    : Date.UTC(instant.getUTCFullYear(), instant.getUTCMonth() + 1, 1);
}
