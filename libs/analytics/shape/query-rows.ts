import {
  DIMENSIONS,
  type DimensionName,
  emptyValue,
  METRICS,
  type MetricName,
  noneLabel,
} from '../catalog/catalog.ts';
import type { AnalyticsQuery } from '../parse/query-parser.ts';
import type { TimeBucket } from '../period/buckets.ts';

/** Steps from the engine's rows to the answer's: each a pure function of rows. */
export type Row = Record<string, unknown>;

/** A dimension's stored "none" (a task without a project) is answered as null. */
export function nullLabels(rows: Row[], dimensions: DimensionName[]): Row[] {
  const nullable = dimensions.filter((name) => noneLabel(name) !== undefined);
  if (nullable.length === 0) return rows;
  return rows.map((row) => {
    const out = { ...row };
    for (const name of nullable) if (out[name] === noneLabel(name)) out[name] = null;
    return out;
  });
}

/** What a bucket with nothing in it reads: each metric's empty value. */
export const emptyMetrics = (metrics: MetricName[]): Row =>
  Object.fromEntries(metrics.map((name) => [name, emptyValue(name)]));

/** What a row the time budget did not reach reads: null, never a count of 0. */
export const unreadMetrics = (metrics: MetricName[]): Row =>
  Object.fromEntries(metrics.map((name) => [name, null]));

/**
 * A series (only a time dimension) answers every bucket of the period: buckets without facts
 * read their metrics' empty values, and state metrics are null in buckets not begun yet, which
 * have no state to read. `unread`: the statement stopped at its time budget, so a bucket it did
 * not answer is not known to be empty, and reads null.
 */
export function zeroFill(
  rows: Row[],
  query: AnalyticsQuery,
  buckets: TimeBucket[],
  now: Date,
  unread = false,
): Row[] {
  const [time] = query.dimensions as [DimensionName];
  const byLabel = new Map(rows.map((row) => [row[time], row]));
  const missing = unread ? unreadMetrics(query.metrics) : emptyMetrics(query.metrics);
  return buckets.map((bucket) => {
    const found = byLabel.get(bucket.label);
    if (found) return found;
    const row: Row = { [time]: bucket.label, ...missing };
    if (bucket.start.getTime() >= now.getTime()) {
      for (const name of query.metrics) if (METRICS[name].source === 'state') row[name] = null;
    }
    return row;
  });
}

/** The statement's order, for rows put together here: order_by, then each dimension ascending. */
export function sortRows(rows: Row[], query: AnalyticsQuery): Row[] {
  const named = new Set<string>(query.orderBy.map((order) => order.field));
  const terms = [
    ...query.orderBy,
    ...query.dimensions
      .filter((name) => !named.has(name))
      .map((field) => ({ field, direction: 'asc' })),
  ];
  const compare = (a: unknown, b: unknown, direction: string) => {
    // Null last either way, as ClickHouse sorts it.
    if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
    const order = (a as number | string) < (b as number | string) ? -1 : a === b ? 0 : 1;
    return direction === 'desc' ? -order : order;
  };
  return [...rows].sort((a, b) => {
    for (const { field, direction } of terms) {
      const order = compare(a[field], b[field], direction);
      if (order !== 0) return order;
    }
    return 0;
  });
}

/**
 * Each row gains `comparison` (the same labels in the other period; for a time dimension, the
 * bucket at the same position) and `change`, the relative change, null where the other value
 * is 0 or either is null. Labels the other period lacks compare with empty values, or with
 * null when its statement stopped at the time budget (`othersUnread`).
 */
export function attachComparison(
  rows: Row[],
  others: Row[],
  query: AnalyticsQuery,
  buckets: { current: TimeBucket[] | null; other: TimeBucket[] | null },
  othersUnread = false,
): Row[] {
  const index = (list: TimeBucket[] | null) =>
    new Map((list ?? []).map((bucket, i) => [bucket.label, i]));
  const positions = { current: index(buckets.current), other: index(buckets.other) };
  const keyOf = (row: Row, at: Map<string, number>) =>
    JSON.stringify(
      query.dimensions.map((name) =>
        DIMENSIONS[name].time ? at.get(row[name] as string) : row[name],
      ),
    );
  const byKey = new Map(others.map((row) => [keyOf(row, positions.other), row]));
  const empty = othersUnread ? unreadMetrics(query.metrics) : emptyMetrics(query.metrics);
  return rows.map((row) => {
    const other = byKey.get(keyOf(row, positions.current)) ?? empty;
    const comparison = Object.fromEntries(query.metrics.map((name) => [name, other[name] ?? null]));
    return { ...row, comparison, change: changes(row, comparison, query.metrics) };
  });
}

export function changes(current: Row, other: Row, metrics: MetricName[]): Row {
  return Object.fromEntries(
    metrics.map((name) => {
      const [now, then] = [current[name], other[name]];
      if (typeof now !== 'number' || typeof then !== 'number' || then === 0) return [name, null];
      return [name, (now - then) / then];
    }),
  );
}

/** The first bucket not yet complete: it contains now, or ends after the projection's horizon. */
export function incompleteFrom(
  buckets: Array<{ start: Date; end: Date }>,
  horizon: Date,
): string | null {
  const first = buckets.find((bucket) => bucket.end.getTime() > horizon.getTime());
  return first ? first.start.toISOString() : null;
}
