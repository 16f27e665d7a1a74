import { type DimensionName, noneLabel } from '../catalog/catalog.ts';
import type { ResolvedPeriod } from '../period/period.ts';
import type { SourceName } from '../sources/rollups.ts';
import { type CompiledQuery, toClickHouseTime } from './query-compiler.ts';
import { FROM, TO } from './sql/query-params.ts';
import { selectLines } from './sql/select-clauses.ts';
import { alias, ident, param, raw, render, type SqlValue, sql } from './sql/sql-value.ts';

/** A checked request for a dimension's values, as the compiler takes it. */
export interface ValuesRequest {
  business: string;
  /** A label dimension (`dimension-values.schemas.ts`): a facts column of its own name. */
  dimension: DimensionName;
  /** Empty: no restriction. */
  prefix: string;
  /** Null: all time, with no bounds at all. */
  period: ResolvedPeriod | null;
  limit: number;
}

const BUSINESS = param('business', 'String');
const PREFIX = param('prefix', 'String');
const NONE = param('none', 'String');
const LIMIT = param('limit', 'UInt32');

/**
 * One statement: the business's values of the dimension, each with how many facts carry it,
 * the most used first, then by value so that ties come in a stable order. On facts:
 *
 *     SELECT project AS value, count() AS n
 *     FROM facts
 *     WHERE business = {business:String} AND occurred_at >= {from:DateTime64(3, 'UTC')}
 *       AND occurred_at < {to:DateTime64(3, 'UTC')} AND project != {none:String}
 *       AND startsWith(lowerUTF8(project), lowerUTF8({prefix:String}))
 *     GROUP BY value
 *     ORDER BY n DESC, value ASC
 *     LIMIT {limit:UInt32}
 *
 * On a rollup the instant is `slot`, the count `sum(facts)`, and `HAVING n > 0` leaves out
 * labels that only a closed state left in the period (rows of -1 open, no fact of their own).
 * The count is `n`, not `facts`: an alias named like a rollup column would be read inside its
 * own `sum`. Without a period there are no time bounds; without a prefix, no prefix condition.
 */
export function compileValues(request: ValuesRequest, source: SourceName): CompiledQuery {
  const onRollup = source !== 'facts';
  const column = ident(request.dimension);
  const instant = ident(onRollup ? 'slot' : 'occurred_at');
  const none = noneLabel(request.dimension);
  const where: Array<SqlValue | null> = [
    sql`business = ${BUSINESS}`,
    request.period ? sql`${instant} >= ${FROM}` : null,
    request.period ? sql`${instant} < ${TO}` : null,
    none === undefined ? null : sql`${column} != ${NONE}`,
    request.prefix === '' ? null : sql`startsWith(lowerUTF8(${column}), lowerUTF8(${PREFIX}))`,
  ];
  const statement = sql`${selectLines({
    columns: [alias(column, 'value'), alias(raw(onRollup ? 'sum(facts)' : 'count()'), 'n')],
    from: ident(source),
    where,
    groupBy: [ident('value')],
    ...(onRollup ? { having: raw('n > 0') } : {}),
  })}
ORDER BY n DESC, value ASC
LIMIT ${LIMIT}`;
  const { sql: text, parameters } = render(statement);
  const values: Record<string, unknown> = {
    business: request.business,
    prefix: request.prefix,
    none: none ?? '',
    limit: request.limit,
    ...(request.period
      ? { from: toClickHouseTime(request.period.from), to: toClickHouseTime(request.period.to) }
      : {}),
  };
  // Bind only what the text names: engines reject parameters a statement does not mention.
  const params = Object.fromEntries(Object.keys(parameters).map((name) => [name, values[name]]));
  return { sql: text, params };
}
