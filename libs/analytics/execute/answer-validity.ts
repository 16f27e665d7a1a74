import { nextFactsStatement } from '../compile/fact-bounds.ts';
import type { CompiledQuery } from '../compile/query-compiler.ts';
import { localDay, startOfDay } from '../period/period.ts';
import type { QueryPlan } from '../plan/query-plan.ts';

/*
 * How long an answer computed at `now` stays the answer, while no new fact is projected.
 *
 * The clock reaches an answer in three ways only:
 *  - boundaries: which day it is in the query's zone (named periods, `overdue_tasks`), which
 *    buckets have started, whether the period has started or ended;
 *  - state read "at now": it moves only when `now` passes a fact's instant, and facts normally
 *    happen before they are projected, so only a fact dated in the future (a writer's clock
 *    ahead, facts loaded with later dates) can do it;
 *  - a comparison cut at the elapsed part: the cut moves with the clock over the other period's
 *    facts, and the answer changes when it passes one.
 * The first two are arithmetic on the plan; the last two need to know where the next fact lies,
 * which one small statement asks (`horizonStatement`). Anything unknown ends the answer's life
 * early, never late: the worst case is a miss.
 */

/** How far past the cut the next compared fact is looked for: bounds the statement's reads. */
export const COMPARED_WINDOW_MS = 3_600_000;

/** The first instant after `now` at which the plan's boundaries make its answer another. */
export function nextBoundary(plan: QueryPlan, now: Date): number {
  const at = now.getTime();
  const { period, buckets } = plan;
  const candidates = [
    // Local midnight: named periods move, and `overdue_tasks` compares due dates with the day.
    startOfDay(localDay(now, period.timezone) + 1, period.timezone).getTime(),
    period.from.getTime(),
    period.to.getTime(),
    ...(buckets ?? []).flatMap((bucket) => [bucket.start.getTime(), bucket.end.getTime()]),
    ...comparedBoundaries(plan),
  ];
  return Math.min(...candidates.filter((instant) => instant > at));
}

/**
 * A cut comparison's own boundaries, as clock readings: the cut starts the other period's
 * buckets, and stops at its end, when the clock is as far into this period.
 */
function comparedBoundaries(plan: QueryPlan): number[] {
  const other = plan.comparison;
  if (!other?.period.cutAtElapsed) return [];
  const shift = plan.period.from.getTime() - other.period.period.from.getTime();
  return [
    other.period.period.to.getTime(),
    ...(other.buckets ?? []).flatMap((bucket) => [bucket.start.getTime(), bucket.end.getTime()]),
  ].map((instant) => instant + shift);
}

/**
 * Where the next fact lies that the clock could reach: one dated at or after `now`, and, for a
 * comparison cut at the elapsed part, the first fact of the other period at or after the cut
 * (within COMPARED_WINDOW_MS). Both ranges follow the facts' sort key (business, kind,
 * occurred_at): the engine reads the few granules at their edge.
 */
export function horizonStatement(
  plan: QueryPlan,
  now: Date,
  businesses: string[] | null,
): CompiledQuery {
  const other = plan.comparison?.period;
  const cut = other?.cutAtElapsed ? other.until : null;
  const windowEnd =
    other && cut
      ? new Date(Math.min(cut.getTime() + COMPARED_WINDOW_MS, other.period.to.getTime()))
      : null;
  return nextFactsStatement(now, cut && windowEnd ? { cut, windowEnd } : null, businesses);
}

/** What the horizon statement answered; instants as epoch milliseconds. */
export interface Horizon {
  next_fact: number | string | null;
  next_compared: number | string | null;
}

/**
 * The end (excluded) of the span of clock readings from `now` over which the plan's answer is
 * the same, given where the next facts lie.
 */
export function validUntil(plan: QueryPlan, now: Date, horizon: Horizon): number {
  const limits = [nextBoundary(plan, now)];
  if (horizon.next_fact !== null) limits.push(Number(horizon.next_fact));
  const comparison = plan.comparison?.period;
  if (comparison?.cutAtElapsed) {
    // The cut sits as far into the other period as now is into this one: it reaches a fact f
    // when now reaches the same distance into this period.
    const shift = plan.period.from.getTime() - comparison.period.from.getTime();
    const reach =
      horizon.next_compared !== null
        ? Number(horizon.next_compared)
        : comparison.until.getTime() + COMPARED_WINDOW_MS;
    limits.push(reach + shift);
  }
  return Math.min(...limits);
}
