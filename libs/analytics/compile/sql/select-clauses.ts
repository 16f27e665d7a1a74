import { and, ident, join, type SqlValue, sql } from './sql-value.ts';

/** One SELECT as data: each clause a value, absent or empty where the statement has none. */
export interface Select {
  distinct?: boolean;
  columns: readonly SqlValue[];
  from: SqlValue;
  arrayJoin?: SqlValue;
  /** Conditions joined by AND. */
  where?: ReadonlyArray<SqlValue | null>;
  groupBy?: readonly SqlValue[];
  having?: SqlValue;
}

/**
 * The clauses of a select in their order, those it has only:
 * `SELECT [DISTINCT] a, b` · `FROM t` · `ARRAY JOIN e` · `WHERE c AND d` · `GROUP BY a` ·
 * `HAVING h`.
 */
export function selectClauses(select: Select): SqlValue[] {
  const where = (select.where ?? []).filter((condition) => condition !== null);
  const groupBy = select.groupBy ?? [];
  return [
    sql`SELECT ${select.distinct ? sql`DISTINCT ` : join([])}${join(select.columns)}`,
    sql`FROM ${select.from}`,
    ...(select.arrayJoin ? [sql`ARRAY JOIN ${select.arrayJoin}`] : []),
    ...(where.length > 0 ? [sql`WHERE ${and(where)}`] : []),
    ...(groupBy.length > 0 ? [sql`GROUP BY ${join(groupBy)}`] : []),
    ...(select.having ? [sql`HAVING ${select.having}`] : []),
  ];
}

/** A select on one line, as a subquery or a CTE body: `SELECT a FROM t WHERE c`. */
export const inlineSelect = (select: Select): SqlValue => join(selectClauses(select), ' ');

/** A select with each clause on a line of its own, as a statement's main select reads. */
export const selectLines = (select: Select): SqlValue => join(selectClauses(select), '\n');

/** `(SELECT …)`, to read from. */
export const subquery = (body: Select | SqlValue): SqlValue =>
  sql`(${'columns' in body ? inlineSelect(body) : body})`;

/** `a UNION ALL b`. */
export const unionAll = (...selects: Select[]): SqlValue =>
  join(selects.map(inlineSelect), ' UNION ALL ');

/** A common table: `name AS (SELECT …)`. */
export const cte = (name: string, body: Select): SqlValue =>
  sql`${ident(name)} AS ${subquery(body)}`;

/** `statement` followed, on a line of its own, by `SETTINGS a, b` when it has settings. */
export const withSettings = (statement: SqlValue, settings: readonly SqlValue[]): SqlValue =>
  settings.length > 0 ? sql`${statement}\nSETTINGS ${join(settings)}` : statement;
