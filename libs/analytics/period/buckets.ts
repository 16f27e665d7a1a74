import type { DimensionName } from '../catalog/catalog.ts';
import {
  atWallClock,
  civil,
  type Day,
  dayOf,
  localDay,
  type ResolvedPeriod,
  startOfDay,
  type WeekStart,
  wallClock,
  weekFirstDay,
} from './period.ts';

/** No request may ask for more time buckets than this (8,760 hours are a year). */
export const MAX_BUCKETS = 10_000;

/**
 * A period holds more than MAX_BUCKETS buckets of `dimension`. A domain fact: it names the
 * dimension, not where a request put it; the query route answers it as a 422 at that dimension.
 */
export class TooManyBucketsError extends Error {
  override name = 'TooManyBucketsError';
  readonly dimension: DimensionName;
  constructor(dimension: DimensionName) {
    super(
      `This period has more than ${MAX_BUCKETS} ${dimension} buckets; use a coarser time dimension or a shorter period`,
    );
    this.dimension = dimension;
  }
}

/**
 * One bucket of a time dimension inside a period: its label (as the dimension's SQL names it),
 * and where it starts and ends, clipped to the period.
 */
export interface TimeBucket {
  label: string;
  start: Date;
  end: Date;
}

/**
 * Every bucket of `dimension` in the period, in order, future ones included: what a zero-filled
 * series shows and what comparisons align by index. An all_time list starts with the bucket of
 * the earliest fact in scope (`since`). More than MAX_BUCKETS throws TooManyBucketsError.
 */
export function timeBuckets(
  period: ResolvedPeriod,
  dimension: DimensionName,
  since: Date | null,
): TimeBucket[] {
  const tz = period.timezone;
  const week = period.weekStart;
  const buckets: TimeBucket[] = [];
  let start = period.from;
  if (period.name === 'all_time') {
    start = since ? bucketStart(dimension, since, tz, week) : period.to;
  }
  while (start.getTime() < period.to.getTime()) {
    if (buckets.length === MAX_BUCKETS) {
      throw new TooManyBucketsError(dimension);
    }
    const next = nextStart(dimension, start, tz, week);
    const end = next.getTime() < period.to.getTime() ? next : period.to;
    buckets.push({ label: bucketLabel(dimension, start, tz, week), start, end });
    start = end;
  }
  return buckets;
}

/** The instants at which state metrics are measured (see stateBuckets). */
export interface StateBuckets {
  /** Each bucket's first instant, inside the period: what the time dimension labels. */
  starts: Date[];
  /** Where each bucket's state is read: its end, or now if that comes first. */
  ats: Date[];
}

/**
 * Without a time dimension state is read once, at the period's end; with one, at each bucket's
 * end. Instants never pass `now`: the future has no facts, so "at the end of this month" means
 * "now", and buckets that have not started yet are left out.
 */
export function stateBuckets(
  period: ResolvedPeriod,
  buckets: TimeBucket[] | null,
  now: Date,
): StateBuckets {
  const cap = (instant: Date) => (instant.getTime() < now.getTime() ? instant : now);
  if (buckets === null) return { starts: [period.from], ats: [cap(period.to)] };
  const started = buckets.filter((bucket) => bucket.start.getTime() < now.getTime());
  return {
    starts: started.map((bucket) => bucket.start),
    ats: started.map((bucket) => cap(bucket.end)),
  };
}

const MS_PER_HOUR = 3_600_000;
/** How far into its hour a wall-clock time is (also before 1970, where times are negative). */
const intoHour = (wall: number) => ((wall % MS_PER_HOUR) + MS_PER_HOUR) % MS_PER_HOUR;

/** The first instant of the bucket containing `instant`. */
function bucketStart(
  dimension: DimensionName,
  instant: Date,
  tz: string,
  week: WeekStart = 'monday',
): Date {
  if (dimension === 'hour') {
    return new Date(instant.getTime() - intoHour(wallClock(instant.getTime(), tz)));
  }
  return startOfDay(firstDay(dimension, localDay(instant, tz), week), tz);
}

/** The first instant of the bucket after the one starting at `start`. */
function nextStart(dimension: DimensionName, start: Date, tz: string, week: WeekStart): Date {
  if (dimension !== 'hour') {
    return startOfDay(nextBucket(dimension, firstDay(dimension, localDay(start, tz), week)), tz);
  }
  // An hour later is normally the next hour; where the clocks moved by part of an hour, the
  // next wall-clock hour begins sooner or later than that.
  const wall = wallClock(start.getTime(), tz);
  const next = bucketStart('hour', new Date(start.getTime() + MS_PER_HOUR), tz);
  if (next.getTime() > start.getTime()) return next;
  return atWallClock(wall - intoHour(wall) + MS_PER_HOUR, tz);
}

function bucketLabel(dimension: DimensionName, start: Date, tz: string, week: WeekStart): string {
  const wall = wallClock(start.getTime(), tz);
  if (dimension !== 'hour') {
    const day = firstDay(dimension, localDay(start, tz), week);
    return new Date(day * 86_400_000).toISOString().slice(0, 10);
  }
  const hour = wall - intoHour(wall);
  const offset = Math.round((wall - start.getTime()) / 60_000);
  const sign = offset < 0 ? '-' : '+';
  const pad = (n: number) => String(Math.floor(n)).padStart(2, '0');
  return `${new Date(hour).toISOString().slice(0, 19)}${sign}${pad(Math.abs(offset) / 60)}:${pad(Math.abs(offset) % 60)}`;
}

/** The first day of the bucket containing `day`. */
function firstDay(dimension: DimensionName, day: Day, week: WeekStart): Day {
  const { year, month } = civil(day);
  switch (dimension) {
    case 'week':
      return weekFirstDay(day, week);
    case 'month':
      return dayOf(year, month, 1);
    case 'quarter':
      return dayOf(year, month - ((month - 1) % 3), 1);
    default:
      return day;
  }
}

/** The first day of the bucket after the one starting on `day`. */
function nextBucket(dimension: DimensionName, day: Day): Day {
  const { year, month } = civil(day);
  switch (dimension) {
    case 'week':
      return day + 7;
    case 'month':
      return dayOf(year, month + 1, 1);
    case 'quarter':
      return dayOf(year, month - ((month - 1) % 3) + 3, 1);
    default:
      return day + 1;
  }
}
