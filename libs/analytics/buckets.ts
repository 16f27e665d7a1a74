import type { DimensionName } from './catalog.ts';
import {
  civil,
  type Day,
  dayOf,
  localDay,
  type ResolvedPeriod,
  startOfDay,
  weekday,
} from './period.ts';

/**
 * The instants at which state metrics are measured. Without a time dimension there is one:
 * the period's end. With one, each bucket (day, week, …) inside the period is measured at its
 * own end. Instants never pass `now`: the future has no facts, so "at the end of this month"
 * means "now", and buckets that have not started yet are left out.
 */
export interface StateBuckets {
  /** Each bucket's first instant, inside the period: what the time dimension labels. */
  starts: Date[];
  /** Where each bucket's state is read: its end, or now if that comes first. */
  ats: Date[];
}

export function stateBuckets(
  period: ResolvedPeriod,
  timeDimension: DimensionName | undefined,
  now: Date,
  /** The earliest fact in scope: where an all_time bucket list starts. */
  since: Date | null,
): StateBuckets {
  const cap = (instant: Date) => (instant.getTime() < now.getTime() ? instant : now);
  if (!timeDimension) return { starts: [period.from], ats: [cap(period.to)] };
  const tz = period.timezone;
  let fromDay = localDay(period.from, tz);
  if (period.name === 'all_time') fromDay = since ? localDay(since, tz) : localDay(period.to, tz);
  const toDay = localDay(period.to, tz);
  const starts: Date[] = [];
  const ats: Date[] = [];
  for (let day = fromDay; day < toDay; ) {
    const next = Math.min(nextBucket(timeDimension, day), toDay);
    const start = startOfDay(day, tz);
    if (start.getTime() >= now.getTime()) break;
    starts.push(start);
    ats.push(cap(startOfDay(next, tz)));
    day = next;
  }
  return { starts, ats };
}

/** The first day of the bucket after the one containing `day`. */
function nextBucket(dimension: DimensionName, day: Day): Day {
  const { year, month } = civil(day);
  switch (dimension) {
    case 'week':
      return day - ((weekday(day) + 6) % 7) + 7;
    case 'month':
      return dayOf(year, month + 1, 1);
    case 'quarter':
      return dayOf(year, month - ((month - 1) % 3) + 3, 1);
    default:
      return day + 1;
  }
}
