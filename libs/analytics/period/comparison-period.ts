import { atWallClock, type ResolvedPeriod, wallClock } from './period.ts';

/** What a period can be compared with: the one just before, or the same one a year earlier. */
export const COMPARE_MODES = ['previous_period', 'previous_year'] as const;
export type CompareMode = (typeof COMPARE_MODES)[number];

/** What a period is compared with. */
export interface ComparisonPeriod {
  /** The whole period compared with: its buckets line up with the current period's. */
  period: ResolvedPeriod;
  /** Where its facts stop counting: its end, or the cut when the current period runs past now. */
  until: Date;
  /** Whether `until` cuts it at the elapsed part of a current period still running. */
  cutAtElapsed: boolean;
}

/**
 * The period before (one step of the period's own kind: a month for this_month, N days for N
 * days, the same duration for date-times) or a year before, on the local calendar. When the
 * current period ends after now, only the same elapsed part of the other counts, so a month
 * half gone is set against the first half of the last one.
 */
export function comparisonPeriod(
  current: ResolvedPeriod,
  mode: CompareMode,
  now: Date,
): ComparisonPeriod {
  const step = mode === 'previous_year' ? { months: 12 } : current.step;
  const back = (instant: Date): Date => {
    if (step === null) return new Date(instant.getTime() - duration(current));
    return atWallClock(
      shiftWall(wallClock(instant.getTime(), current.timezone), step),
      current.timezone,
    );
  };
  const period = { ...current, from: back(current.from), to: back(current.to) };
  if (current.to.getTime() <= now.getTime()) {
    return { period, until: period.to, cutAtElapsed: false };
  }
  const elapsed = Math.max(0, now.getTime() - current.from.getTime());
  const cut = Math.min(period.from.getTime() + elapsed, period.to.getTime());
  return { period, until: new Date(cut), cutAtElapsed: true };
}

const duration = (period: ResolvedPeriod) => period.to.getTime() - period.from.getTime();

/** A wall-clock time (ms read as UTC) moved back by whole days or months; 31 March − 1 month is 28 (or 29) February. */
function shiftWall(wall: number, step: { months: number } | { days: number }): number {
  if ('days' in step) return wall - step.days * 86_400_000;
  const date = new Date(wall);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth() - step.months;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return Date.UTC(
    year,
    month,
    Math.min(date.getUTCDate(), lastDay),
    date.getUTCHours(),
    date.getUTCMinutes(),
    date.getUTCSeconds(),
    date.getUTCMilliseconds(),
  );
}
