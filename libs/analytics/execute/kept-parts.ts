import type { QueryPlan } from '../plan/query-plan.ts';
import type { NewFacts } from './answer-freshness.ts';
import type { Horizon } from './answer-validity.ts';

/*
 * Which parts of a kept answer are still the answer, after new facts were projected or the
 * clock moved on. Every figure reads facts inside a window: flow metrics those dated in it,
 * state metrics those dated before the instant it is read at (a bucket's end, or now). So a
 * part whose window ended before the kept answer was computed reads the same, unless a fact
 * dated before that end has been projected since. Facts projected late keep their own dates:
 * the change log (`NewFacts`) says how far back the new ones reach, per business.
 */

/** The kept answer, as far as deciding goes. */
export interface KeptAnswer {
  computedAt: number;
  validUntil: number;
  /** Where the next facts lay when it was computed; null when not known. */
  horizon: Horizon | null;
  /** The first bucket start its series rows cover; null without a series. */
  from: number | null;
  /** Where its comparison was read up to (epoch ms); null without one. */
  comparedUntil: number | null;
}

export interface Holding {
  /** Everything holds: the kept answer is the answer, and nothing runs. */
  all: boolean;
  /** A series: how many of its leading buckets hold; the rest are computed. */
  buckets: number;
  /** The rows (a series: every bucket holds). */
  main: boolean;
  totals: boolean;
  /** The comparison's rows and totals. */
  comparison: boolean;
  /** A series compared: how many of the other period's leading buckets hold. */
  comparedBuckets: number;
  /** The labels named by filters that the businesses ever had. */
  labels: boolean;
  /** Where the next facts lie: the answer's life can be worked out without asking again. */
  horizon: boolean;
}

const NOTHING: Omit<Holding, 'all'> = {
  buckets: 0,
  main: false,
  totals: false,
  comparison: false,
  comparedBuckets: 0,
  labels: false,
  horizon: false,
};

/** The first instant new facts may have changed: +∞ when none did, −∞ when any may have. */
export function changedFrom(facts: NewFacts): number {
  if (facts.everything) return Number.NEGATIVE_INFINITY;
  return facts.earliest ?? Number.POSITIVE_INFINITY;
}

export function holding(plan: QueryPlan, kept: KeptAnswer, now: Date, facts: NewFacts): Holding {
  const at = now.getTime();
  const changed = changedFrom(facts);
  const buckets = plan.buckets ?? [];
  // A reading earlier than the kept one (a caller's clock behind another's) reuses nothing.
  if (at < kept.computedAt) return { all: false, ...NOTHING };
  if (changed === Number.POSITIVE_INFINITY && at < kept.validUntil) {
    return { all: true, ...NOTHING, buckets: buckets.length, main: true };
  }
  // A window ending here reads the same now as when kept: it had ended, and no new fact is
  // dated inside it. State read at its end sees only facts dated before the end.
  const settled = (end: number) => end <= kept.computedAt && end <= changed;
  let count = 0;
  if (plan.series && kept.from !== null) {
    while (
      count < buckets.length &&
      (buckets[count] as { start: Date }).start.getTime() >= kept.from &&
      settled((buckets[count] as { end: Date }).end.getTime())
    ) {
      count += 1;
    }
  }
  const main = plan.series
    ? count > 0 && count === buckets.length
    : settled(plan.period.to.getTime());
  const other = plan.comparison?.period;
  // A comparison cut at the elapsed part reads up to a cut that moves with the clock. Without a
  // series its rows are those of the page's labels, which hold only with the page.
  const comparison =
    other !== undefined &&
    !other.cutAtElapsed &&
    settled(other.until.getTime()) &&
    (plan.series || main);
  // The other period's buckets that had ended at the kept cut were counted whole, as they are
  // at any later cut, and hold unless a new fact is dated in them.
  let compared = 0;
  const otherBuckets = plan.comparison?.buckets ?? [];
  if (plan.series && kept.comparedUntil !== null) {
    const limit = Math.min(kept.comparedUntil, changed);
    while (
      compared < otherBuckets.length &&
      (otherBuckets[compared] as { end: Date }).end.getTime() <= limit
    ) {
      compared += 1;
    }
  }
  const next = kept.horizon?.next_fact ?? null;
  const horizon =
    kept.horizon !== null &&
    !facts.everything &&
    !other?.cutAtElapsed &&
    (facts.latest === null || facts.latest < at) &&
    (next === null || Number(next) >= at);
  return {
    all: false,
    buckets: count,
    main,
    totals: settled(plan.period.to.getTime()),
    comparison,
    comparedBuckets: compared,
    labels: changed === Number.POSITIVE_INFINITY,
    horizon,
  };
}
