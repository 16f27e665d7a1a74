const integer = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const decimal = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });
const percent = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 });
const signedPercent = new Intl.NumberFormat(undefined, {
  style: 'percent',
  maximumFractionDigits: 1,
  signDisplay: 'exceptZero',
});

export const NONE_LABEL = '(none)';

/** A metric value as a person reads it: ratios as percentages, null as a dash. */
export function formatValue(value, column) {
  if (value === null || value === undefined) return '—';
  if (typeof value !== 'number') return String(value);
  if (column?.unit === 'ratio') return percent.format(value);
  if (column?.unit === 'hours') return formatHours(value);
  return column?.type === 'integer' ? integer.format(value) : decimal.format(value);
}

/** An axis tick: like a value, but never rounded to a neighbour's label. */
export function formatTick(value, column) {
  if (column?.unit === 'ratio') return percent.format(value);
  if (column?.unit === 'hours') return formatHours(value);
  return decimal.format(value);
}

/**
 * Hours as days, hours and minutes, the two largest that apply: 490.07 → "20 d 10 h",
 * 5.5 → "5 h 30 min", 0.25 → "15 min".
 */
export function formatHours(hours) {
  if (!Number.isFinite(hours)) return '—';
  const sign = hours < 0 ? '−' : '';
  const minutes = Math.round(Math.abs(hours) * 60);
  if (minutes === 0) return '0 h';
  if (minutes < 60) return `${sign}${minutes} min`;
  if (minutes < 24 * 60) {
    const [h, m] = [Math.floor(minutes / 60), minutes % 60];
    return `${sign}${h} h${m ? ` ${m} min` : ''}`;
  }
  const wholeHours = Math.round(minutes / 60);
  const [d, h] = [Math.floor(wholeHours / 24), wholeHours % 24];
  return `${sign}${d} d${h ? ` ${h} h` : ''}`;
}

const dateFormats = new Map();
const dateFormat = (options) => {
  const key = JSON.stringify(options);
  if (!dateFormats.has(key)) dateFormats.set(key, new Intl.DateTimeFormat(undefined, options));
  return dateFormats.get(key);
};

/**
 * A time bucket's label in the reader's locale, one format per dimension everywhere on the page
 * (exports keep ISO): a day or a week by its date, a month by month and year, a quarter as
 * "Q4 2026", an hour by its date and time in the query's zone.
 */
export function formatBucket(label, dimension, timeZone) {
  if (label === null || label === undefined) return NONE_LABEL;
  if (dimension === 'hour' && hasOffset(label)) {
    const instant = new Date(label);
    if (Number.isNaN(instant.getTime())) return String(label);
    return dateFormat({
      month: 'short',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      timeZone,
      timeZoneName: 'short',
    }).format(instant);
  }
  const seconds = wallClockSeconds(label);
  if (seconds === null) return String(label);
  const date = new Date(seconds * 1000);
  if (dimension === 'quarter') {
    return `Q${Math.floor(date.getUTCMonth() / 3) + 1} ${date.getUTCFullYear()}`;
  }
  if (dimension === 'month') {
    return dateFormat({ year: 'numeric', month: 'short', timeZone: 'UTC' }).format(date);
  }
  return dateFormat({ year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' }).format(
    date,
  );
}

export const formatChange = (value) =>
  value === null || value === undefined ? '—' : signedPercent.format(value);

export const formatLabel = (value) => (value === null ? NONE_LABEL : String(value));

export function formatDuration(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 120) return `${Math.round(seconds)} s`;
  const minutes = seconds / 60;
  return minutes < 120 ? `${Math.round(minutes)} min` : `${Math.round(minutes / 60)} h`;
}

const WALL_CLOCK =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * A bucket label (`2026-11-22`, `2026-11-22T13:00:00+01:00`) as Unix seconds of its wall-clock
 * time read as UTC, its offset set aside: charts then show the labels exactly as the query's
 * time zone wrote them.
 */
export function wallClockSeconds(label) {
  const match = WALL_CLOCK.exec(String(label));
  if (!match) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0'] = match;
  return Date.UTC(+y, +mo - 1, +d, +h, +mi, +s) / 1000;
}

/** A label naming an instant (`…T01:00:00-05:00`), not just a wall-clock date or time. */
export const hasOffset = (label) =>
  /(?:Z|[+-]\d{2}:?\d{2})$/.test(String(label)) && String(label).includes('T');

/**
 * Where a bucket sits on a chart's axis: its instant when the label carries an offset (so the
 * two 01:00 of a night the clocks go back are two points), its wall-clock time otherwise.
 */
export function bucketKey(label) {
  if (!hasOffset(label)) return wallClockSeconds(label);
  const ms = Date.parse(String(label));
  return Number.isNaN(ms) ? null : ms / 1000;
}

/** An instant (or a wall-clock label) as wall-clock Unix seconds in `timeZone`. */
export function instantAsWallClock(value, timeZone) {
  // A date alone is already a wall-clock day; anything with a time is an instant.
  if (/^\d{4}-\d{2}-\d{2}$/.test(String(value))) return wallClockSeconds(value);
  const instant = new Date(value);
  if (Number.isNaN(instant.getTime())) return null;
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .formatToParts(instant)
      .map((part) => [part.type, part.value]),
  );
  return (
    Date.UTC(+parts.year, +parts.month - 1, +parts.day, +parts.hour, +parts.minute, +parts.second) /
    1000
  );
}
