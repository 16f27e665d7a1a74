import { hasOffset, instantAsWallClock, wallClockSeconds } from './format.js';

/** What the views need to know about one answer of /query, worked out once. */
export function describeResult(response, catalog) {
  const { metadata } = response;
  const columns = metadata.columns ?? [];
  const timeNames = new Set(catalog.dimensions.filter((d) => d.time).map((d) => d.name));
  const dimensions = columns.filter((c) => c.kind === 'dimension');
  const timeDimension = dimensions.find((c) => timeNames.has(c.name)) ?? null;
  const timezone = metadata.query?.period?.timezone ?? 'UTC';
  const incompleteFrom =
    metadata.incomplete_from == null
      ? null
      : instantAsWallClock(metadata.incomplete_from, timezone);
  return {
    rows: response.data,
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
