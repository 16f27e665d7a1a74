import { DEFAULT_WEEK_START, type WeekStart } from '../catalog/catalog.ts';

/**
 * Named periods → half-open [from, to) instants. Every period is a run of whole calendar days
 * in the request's time zone, so a day boundary is local midnight even across DST changes.
 * "last_N_days" are the N days ending with today (today included); weeks start on Monday, or
 * on Sunday where the query says so (`week_start`).
 */
export const PERIODS = [
  'today',
  'yesterday',
  'last_7_days',
  'last_30_days',
  'last_90_days',
  'this_week',
  'last_week',
  'this_month',
  'last_month',
  'this_quarter',
  'this_year',
  'last_quarter',
  'last_year',
  'last_12_months',
  'all_time',
] as const;

export type PeriodName = (typeof PERIODS)[number];
export const DEFAULT_PERIOD: PeriodName = 'last_30_days';

export { DEFAULT_WEEK_START, WEEK_STARTS, type WeekStart } from '../catalog/catalog.ts';

/** What each name covers, in whole days of the query time zone; served by the catalog route. */
export const PERIOD_DESCRIPTIONS: Record<PeriodName, string> = {
  today: 'Today, from local midnight to the next.',
  yesterday: 'The whole day before today.',
  last_7_days: 'The 7 days ending with today (today included).',
  last_30_days: 'The 30 days ending with today (today included). The default.',
  last_90_days: 'The 90 days ending with today (today included).',
  this_week:
    'The week containing today: Monday to Sunday, or Sunday to Saturday with `week_start: sunday`.',
  last_week: 'The week before this one (starting on the same day as this_week).',
  this_month: 'The calendar month containing today.',
  last_month: 'The calendar month before this one.',
  this_quarter: 'The calendar quarter containing today.',
  this_year: 'The calendar year containing today.',
  last_quarter: 'The calendar quarter before this one.',
  last_year: 'The calendar year before this one.',
  last_12_months:
    'The 12 whole calendar months before the current one (the current month left out).',
  all_time: 'Everything up to the end of today.',
};

export interface ResolvedPeriod {
  /** `custom` for a `date_range`. */
  name: PeriodName | 'custom';
  from: Date;
  to: Date;
  timezone: string;
  /** The day its `week` buckets start on. */
  weekStart: WeekStart;
  /**
   * How the period steps back for `compare: previous_period`: whole calendar months (this
   * month, quarter, year), whole local days (named day runs, date ranges) or, for date-time
   * ranges, its exact duration.
   */
  step: { months: number } | { days: number } | null;
}

/** A calendar date as days since 1970-01-01, so arithmetic is plain integer math. */
export type Day = number;
const MS_PER_DAY = 86_400_000;

export function resolvePeriod(
  name: PeriodName,
  now: Date,
  timezone: string,
  weekStart: WeekStart = DEFAULT_WEEK_START,
): ResolvedPeriod {
  const today = localDay(now, timezone);
  const [fromDay, toDay] = dayRange(name, today, weekStart);
  return {
    name,
    from: fromDay === null ? new Date(0) : startOfDay(fromDay, timezone),
    to: startOfDay(toDay, timezone),
    timezone,
    weekStart,
    step: fromDay === null ? null : (MONTH_STEPS[name] ?? { days: toDay - fromDay }),
  };
}

/** Periods that are calendar months step back by months, whatever their length in days. */
const MONTH_STEPS: Partial<Record<PeriodName, { months: number }>> = {
  this_month: { months: 1 },
  last_month: { months: 1 },
  this_quarter: { months: 3 },
  this_year: { months: 12 },
  last_quarter: { months: 3 },
  last_year: { months: 12 },
  last_12_months: { months: 12 },
};

/** The first day of the week containing `day`, weeks starting on `weekStart`. */
export const weekFirstDay = (day: Day, weekStart: WeekStart): Day =>
  day - ((weekday(day) + (weekStart === 'monday' ? 6 : 7)) % 7);

function dayRange(name: PeriodName, today: Day, weekStart: WeekStart): [Day | null, Day] {
  const { year, month } = civil(today);
  const weekStartDay = weekFirstDay(today, weekStart);
  const quarterMonth = month - ((month - 1) % 3);
  switch (name) {
    case 'today':
      return [today, today + 1];
    case 'yesterday':
      return [today - 1, today];
    case 'last_7_days':
      return [today - 6, today + 1];
    case 'last_30_days':
      return [today - 29, today + 1];
    case 'last_90_days':
      return [today - 89, today + 1];
    case 'this_week':
      return [weekStartDay, weekStartDay + 7];
    case 'last_week':
      return [weekStartDay - 7, weekStartDay];
    case 'this_month':
      return [dayOf(year, month, 1), dayOf(year, month + 1, 1)];
    case 'last_month':
      return [dayOf(year, month - 1, 1), dayOf(year, month, 1)];
    case 'this_quarter':
      return [dayOf(year, quarterMonth, 1), dayOf(year, quarterMonth + 3, 1)];
    case 'this_year':
      return [dayOf(year, 1, 1), dayOf(year + 1, 1, 1)];
    case 'last_quarter':
      return [dayOf(year, quarterMonth - 3, 1), dayOf(year, quarterMonth, 1)];
    case 'last_year':
      return [dayOf(year - 1, 1, 1), dayOf(year, 1, 1)];
    case 'last_12_months':
      return [dayOf(year, month - 12, 1), dayOf(year, month, 1)];
    case 'all_time':
      return [null, today + 1];
  }
}

/**
 * The IANA name a time zone is known by, or null when there is none. Names are matched without
 * regard to case and old aliases resolve (`utc` → `UTC`, `US/Pacific` →
 * `America/Los_Angeles`), since ClickHouse loads zones by their exact name. Offsets such as
 * `+05:30`, which newer runtimes accept, are not IANA names and are refused.
 */
export function canonicalTimezone(timezone: string): string | null {
  try {
    return zone(timezone).canonical;
  } catch {
    return null;
  }
}

const IANA_NAME = /^[A-Za-z][A-Za-z_]*(\/[A-Za-z0-9_+-]+)*$/;

export const dayOf = (year: number, month: number, date: number): Day =>
  Math.floor(Date.UTC(year, month - 1, date) / MS_PER_DAY);

export function civil(day: Day): { year: number; month: number } {
  const date = new Date(day * MS_PER_DAY);
  return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1 };
}

/** 0 = Sunday … 6 = Saturday. */
export const weekday = (day: Day): number => new Date(day * MS_PER_DAY).getUTCDay();

/**
 * Zones by name as sent: a formatter for the period maths and the IANA name, both costly to
 * build (building the formatter is the check that the zone exists). Names are case-insensitive,
 * so callers could send endless spellings of valid zones: the map is bounded, dropping its
 * oldest entry when full.
 */
const zones = new Map<string, { format: Intl.DateTimeFormat; canonical: string | null }>();
const MAX_ZONES = 1000;
function zone(timezone: string): { format: Intl.DateTimeFormat; canonical: string | null } {
  let known = zones.get(timezone);
  if (!known) {
    if (zones.size >= MAX_ZONES) zones.delete(zones.keys().next().value as string);
    const format = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    const name = format.resolvedOptions().timeZone;
    known = { format, canonical: IANA_NAME.test(name) ? name : null };
    zones.set(timezone, known);
  }
  return known;
}

/** The wall-clock time at `instant` in `timezone`, read as if it were UTC, in ms (whole seconds). */
export function wallClock(instant: number, timezone: string): number {
  const slot = Math.floor(instant / OFFSET_SLOT_MS);
  let offset = offsets.get(timezone)?.get(slot);
  if (offset === undefined) {
    if (offsetEntries >= MAX_OFFSET_ENTRIES) {
      offsets.clear();
      offsetEntries = 0;
    }
    offset = slotOffset(slot * OFFSET_SLOT_MS, timezone);
    let slots = offsets.get(timezone);
    if (!slots) {
      slots = new Map();
      offsets.set(timezone, slots);
    }
    slots.set(slot, offset);
    offsetEntries++;
  }
  return offset === null
    ? readWallClock(instant, timezone)
    : Math.floor(instant / 1000) * 1000 + offset;
}

/**
 * Reading a wall clock through Intl costs about 10 µs, and a month of daily buckets needs a
 * hundred readings per query: offsets are remembered per zone and quarter hour instead. A
 * quarter hour whose first and last second share an offset has it throughout (zones change at
 * most once within hours); one that straddles a change is read through Intl at every call.
 */
const OFFSET_SLOT_MS = 15 * 60_000;
const MAX_OFFSET_ENTRIES = 100_000;
const offsets = new Map<string, Map<number, number | null>>();
let offsetEntries = 0;

function slotOffset(start: number, timezone: string): number | null {
  const last = start + OFFSET_SLOT_MS - 1000;
  const offset = readWallClock(start, timezone) - start;
  return readWallClock(last, timezone) - last === offset ? offset : null;
}

/** The wall clock read straight from Intl, with no memo: what `wallClock` always equals. */
export function readWallClock(instant: number, timezone: string): number {
  const parts: Record<string, number> = {};
  for (const part of zone(timezone).format.formatToParts(new Date(instant))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return Date.UTC(
    parts.year ?? 1970,
    (parts.month ?? 1) - 1,
    parts.day ?? 1,
    parts.hour ?? 0,
    parts.minute ?? 0,
    parts.second ?? 0,
  );
}

export function localDay(instant: Date, timezone: string): Day {
  return Math.floor(wallClock(instant.getTime(), timezone) / MS_PER_DAY);
}

/**
 * The first instant of `day` in `timezone`. The zone's offset at local midnight is found by
 * two refinements; where midnight itself is skipped by a DST jump, the day starts at the
 * first wall-clock time that exists.
 */
export function startOfDay(day: Day, timezone: string): Date {
  return atWallClock(day * MS_PER_DAY, timezone);
}

/**
 * The instant whose wall-clock time in `timezone` is `wall` (ms, read as UTC); a wall-clock
 * time skipped by a DST jump moves forward to the first that exists.
 */
export function atWallClock(wall: number, timezone: string): Date {
  let instant = wall - (wallClock(wall, timezone) - wall);
  instant = wall - (wallClock(instant, timezone) - instant);
  if (wallClock(instant, timezone) < wall) {
    // The time does not exist here: step forward to where the clocks resume.
    while (wallClock(instant, timezone) < wall) instant += 15 * 60_000;
    instant -= (wallClock(instant, timezone) - wall) % (15 * 60_000);
  }
  return new Date(instant);
}
