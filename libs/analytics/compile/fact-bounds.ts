import { type CompiledQuery, toClickHouseTime } from './query-compiler.ts';
import { BUSINESSES, TIME } from './sql/query-params.ts';
import { join, param, render, type SqlValue, sql } from './sql/sql-value.ts';

/*
 * Two small statements about where the caller's facts lie in time, not about any metric: the
 * first fact (where an all_time series starts) and the next facts the clock could reach (how
 * long an answer stays the answer, answer-validity.ts).
 */

const NOW = param('now', TIME);
const CUT = param('cut', TIME);
const WINDOW_END = param('window_end', TIME);

const text = (statement: SqlValue) => render(statement).sql;

/** The earliest fact of the businesses as epoch ms (`first`), and how many there are (`facts`). */
export function firstFactStatement(businesses: string[] | null): CompiledQuery {
  const scope = businesses === null ? join([]) : sql`WHERE business IN ${BUSINESSES}`;
  const statement = sql`SELECT toUnixTimestamp64Milli(min(occurred_at)) AS first, count() AS facts FROM facts ${scope}`;
  return { sql: text(statement), params: businesses === null ? {} : { businesses } };
}

/**
 * The first fact dated at or after `now` (`next_fact`), and, with a comparison cut at the
 * elapsed part, the first fact in [cut, windowEnd) (`next_compared`), as epoch ms. Both ranges
 * follow the facts' sort key (business, kind, occurred_at).
 */
export function nextFactsStatement(
  now: Date,
  compared: { cut: Date; windowEnd: Date } | null,
  businesses: string[] | null,
): CompiledQuery {
  const scope = businesses === null ? join([]) : sql`business IN ${BUSINESSES} AND `;
  const window = compared ? sql`occurred_at >= ${CUT} AND occurred_at < ${WINDOW_END}` : sql`0`;
  const statement = join(
    [
      sql`SELECT`,
      sql`  toUnixTimestamp64Milli(minIfOrNull(occurred_at, occurred_at >= ${NOW})) AS next_fact,`,
      sql`  toUnixTimestamp64Milli(minIfOrNull(occurred_at, ${window})) AS next_compared`,
      sql`FROM facts`,
      sql`WHERE ${scope}(occurred_at >= ${NOW} OR (${window}))`,
    ],
    '\n',
  );
  return {
    sql: text(statement),
    params: {
      now: toClickHouseTime(now),
      ...(businesses === null ? {} : { businesses }),
      ...(compared
        ? { cut: toClickHouseTime(compared.cut), window_end: toClickHouseTime(compared.windowEnd) }
        : {}),
    },
  };
}
