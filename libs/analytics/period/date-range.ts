import { isInstant } from '../../http/date-time-format.ts';
import {
  type Day,
  dayOf,
  type PeriodName,
  type ResolvedPeriod,
  resolvePeriod,
  startOfDay,
  type WeekStart,
} from './period.ts';

/**
 * `date_range: [from, to]` → a custom period. Two dates are whole local days, both included;
 * two RFC 3339 date-times with offsets are the half-open span between those instants.
 */
export type DateRange =
  | { kind: 'dates'; from: Day; to: Day }
  | { kind: 'instants'; from: Date; to: Date };

export const MAX_RANGE_YEARS = 10;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** The instants ClickHouse's DateTime64 holds, and the dates a task may be due. */
const MIN_YEAR = 1900;
const MAX_YEAR = 2299;

/**
 * What is wrong with a `date_range`, in the range's own terms: `item` is the index of the bad
 * end (absent when the pair is wrong as a whole). The request layer places it in the request.
 */
export interface DateRangeProblem {
  item?: 0 | 1;
  msg: string;
  type: 'date_range';
}

/** Reads `date_range`, pushing every problem onto `problems` (and returning null then). */
export function parseDateRange(
  range: [string, string],
  problems: DateRangeProblem[],
): DateRange | null {
  const before = problems.length;
  const kinds = range.map((text, i) => {
    if (DATE.test(text) && calendarDay(text) !== null) return 'date';
    // The RFC 3339 shape and a real instant (no 25:61:61, leap second or +99:99 offset), in the
    // years the range allows.
    if (isInstant(text) && calendarDay(text.slice(0, 10)) !== null) return 'date-time';
    problems.push({
      item: i as 0 | 1,
      msg: `'${text}' is neither a date (YYYY-MM-DD) nor an RFC 3339 date-time with an offset, in years ${MIN_YEAR}–${MAX_YEAR}`,
      type: 'date_range',
    });
    return null;
  });
  if (problems.length > before) return null;
  const [from, to] = range;
  if (kinds[0] !== kinds[1]) {
    problems.push({
      msg: 'Give two dates or two date-times, not one of each',
      type: 'date_range',
    });
    return null;
  }
  const parsed: DateRange =
    kinds[0] === 'date'
      ? { kind: 'dates', from: calendarDay(from) as Day, to: calendarDay(to) as Day }
      : { kind: 'instants', from: new Date(from), to: new Date(to) };
  const [start, end] =
    parsed.kind === 'dates'
      ? [parsed.from * 86_400_000, (parsed.to + 1) * 86_400_000]
      : [parsed.from.getTime(), parsed.to.getTime()];
  if (start > end || (parsed.kind === 'dates' && parsed.from > parsed.to)) {
    problems.push({ msg: `'from' (${from}) is after 'to' (${to})`, type: 'date_range' });
    return null;
  }
  const limit = new Date(start);
  limit.setUTCFullYear(limit.getUTCFullYear() + MAX_RANGE_YEARS);
  if (end > limit.getTime()) {
    problems.push({
      msg: `The range spans more than ${MAX_RANGE_YEARS} years; ask for a shorter one`,
      type: 'date_range',
    });
    return null;
  }
  return parsed;
}

function calendarDay(text: string): Day | null {
  const [, y, m, d] = DATE.exec(text.slice(0, 10)) ?? [];
  const [year, month, date] = [Number(y), Number(m), Number(d)];
  if (year < MIN_YEAR || year > MAX_YEAR) return null;
  const day = dayOf(year, month, date);
  // Date.UTC rolls 02-30 over into March: a date is real when it survives the round trip.
  return new Date(day * 86_400_000).toISOString().slice(0, 10) === text.slice(0, 10) ? day : null;
}

export function resolveDateRange(
  range: DateRange,
  timezone: string,
  weekStart: WeekStart = 'monday',
): ResolvedPeriod {
  if (range.kind === 'instants') {
    return { name: 'custom', from: range.from, to: range.to, timezone, weekStart, step: null };
  }
  return {
    name: 'custom',
    from: startOfDay(range.from, timezone),
    to: startOfDay(range.to + 1, timezone),
    timezone,
    weekStart,
    step: { days: range.to + 1 - range.from },
  };
}

/** The query's period as instants: a named one relative to `now`, or its date range. */
export function resolveQueryPeriod(
  period: PeriodName | DateRange,
  now: Date,
  timezone: string,
  weekStart: WeekStart = 'monday',
): ResolvedPeriod {
  return typeof period === 'string'
    ? resolvePeriod(period, now, timezone, weekStart)
    : resolveDateRange(period, timezone, weekStart);
}
