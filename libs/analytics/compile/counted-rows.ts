import type { CompiledRows } from './query-compiler.ts';
import { withSettings } from './sql/select-clauses.ts';
import { ident, render, sql } from './sql/sql-value.ts';

/**
 * The rows statement with its row count (up to its limit) on every row as a last column,
 * `column`, so the count is known from the first row and the rows are read once:
 * `SELECT *, count() OVER () AS column FROM (<rows>)`. The window has neither partition nor
 * order, so the rows keep the statement's order; its settings stay last, outside the subquery.
 */
export function countedRows<Rows extends CompiledRows>(rows: Rows, column: string): Rows {
  const counted = sql`SELECT *, count() OVER () AS ${ident(column)} FROM (\n${rows.statement}\n)`;
  return { ...rows, sql: render(withSettings(counted, rows.settings)).sql };
}
