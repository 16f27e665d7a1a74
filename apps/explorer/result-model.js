import { bucketKey, hasOffset, instantAsWallClock, wallClockSeconds } from './format.js';

/** What the views need to know about one answer of /query, worked out once. */
export function describeResult(response, catalog) {
  const { metadata } = response;
  // Each column named as the catalog names it for people.
  const named = new Map(
    [...catalog.metrics, ...catalog.dimensions].map((item) => [item.name, item]),
  );
  const columns = (metadata.columns ?? []).map((c) => ({
    ...c,
    label: c.label ?? named.get(c.name)?.label,
    description: c.description ?? named.get(c.name)?.description,
  }));
  const timeNames = new Set(catalog.dimensions.filter((d) => d.time).map((d) => d.name));
  const dimensions = columns.filter((c) => c.kind === 'dimension');
  const timeDimension = dimensions.find((c) => timeNames.has(c.name)) ?? null;
  const timezone = metadata.query?.period?.timezone ?? 'UTC';
  const weekStart = metadata.query?.week_start ?? 'monday';
  const incompleteFrom =
    metadata.incomplete_from == null
      ? null
      : instantAsWallClock(metadata.incomplete_from, timezone);
  return {
    rows: response.data,
    /** Every time bucket of the period, as chart keys, whether or not a row has it. */
    buckets: timeDimension ? bucketKeys(response, timeDimension.name, timezone, weekStart) : [],
    timezone,
    /** The day weeks start on: `monday` or `sunday`. */
    weekStart,
    metadata,
    warnings: response.warnings ?? [],
    dimensions,
    metrics: columns.filter((c) => c.kind === 'metric'),
    timeDimension,
    labelDimensions: dimensions.filter((c) => c !== timeDimension),
    compared: metadata.comparison != null || response.data.some((row) => row.comparison),
    /** A row whose time bucket is not complete yet (it contains now, or lies past the data). */
    isIncomplete(row) {
      if (!timeDimension || incompleteFrom === null) return false;
      const label = row[timeDimension.name];
      // An hour names its instant: compared as one, the repeated 01:00 is not mistaken.
      if (hasOffset(label) && !/^\d{4}-\d{2}-\d{2}$/.test(metadata.incomplete_from))
        return Date.parse(label) >= Date.parse(metadata.incomplete_from);
      return wallClockSeconds(label) >= incompleteFrom;
    },
  };
}

const DAY = 86_400;
/** Past this a period's buckets are not spelled out: the rows' own buckets are drawn. */
const MAX_FILLED = 5_000;

/** The first day (days since 1970, a Thursday) of the bucket holding `day`. */
function firstDay(dimension, day, weekStart) {
  const date = new Date(day * DAY * 1000);
  const [y, m] = [date.getUTCFullYear(), date.getUTCMonth()];
  const sinceStart = weekStart === 'sunday' ? 4 : 3;
  if (dimension === 'week') return day - ((((day + sinceStart) % 7) + 7) % 7);
  if (dimension === 'month') return Date.UTC(y, m, 1) / 1000 / DAY;
  if (dimension === 'quarter') return Date.UTC(y, m - (m % 3), 1) / 1000 / DAY;
  return day;
}

function nextDay(dimension, day) {
  const date = new Date(day * DAY * 1000);
  const [y, m] = [date.getUTCFullYear(), date.getUTCMonth()];
  if (dimension === 'week') return day + 7;
  if (dimension === 'month') return Date.UTC(y, m + 1, 1) / 1000 / DAY;
  if (dimension === 'quarter') return Date.UTC(y, m + 3, 1) / 1000 / DAY;
  return day + 1;
}

/**
 * The keys of every bucket the answer covers: the list the answer gives (`metadata.buckets`)
 * when it has one, else the period's buckets worked out here as the server does (weeks from
 * Monday or Sunday as the query says, wall-clock days in the query's zone), with every row's own
 * bucket added. Hours keep to the rows' instants: a night the clocks move has hours a calendar
 * walk would miss.
 */
function bucketKeys(response, dimension, timezone, weekStart) {
  const { metadata } = response;
  const keys = new Set(response.data.map((row) => bucketKey(row[dimension])));
  const listed = metadata.buckets ?? metadata.query?.buckets;
  // A capped answer lacks rows, not counts: what it left out is not drawn as 0.
  const truncated = (response.warnings ?? []).some((w) => w.code === 'result_truncated');
  if (truncated) {
    keys.delete(null);
    return [...keys].sort((a, b) => a - b);
  }
  if (Array.isArray(listed)) {
    for (const bucket of listed) keys.add(bucketKey(bucket?.label ?? bucket));
  } else if (dimension !== 'hour' && metadata.query?.period) {
    const { name, from, to } = metadata.query.period;
    const rowKeys = [...keys].filter((k) => k !== null);
    const start = name === 'all_time' ? Math.min(...rowKeys) : instantAsWallClock(from, timezone);
    const end = instantAsWallClock(to, timezone);
    if (Number.isFinite(start) && Number.isFinite(end) && (end - start) / DAY < MAX_FILLED) {
      for (let day = firstDay(dimension, Math.floor(start / DAY), weekStart); day * DAY < end; ) {
        keys.add(day * DAY);
        day = nextDay(dimension, day);
      }
    }
  }
  keys.delete(null);
  return [...keys].sort((a, b) => a - b);
}
