import { DIMENSIONS } from '../catalog/catalog.ts';
import { namedLabels, type QueryFilter } from '../parse/query-filters.ts';
import type { CompiledQuery } from './query-compiler.ts';
import { BUSINESSES } from './sql/query-params.ts';
import { catalogSql, join, param, raw, render, sql } from './sql/sql-value.ts';

/**
 * Which of the labels the filters name the caller's businesses ever had: one row
 * `{dimension, label}` per label found, in any fact of theirs (every label a task ever had is
 * on the fact that gave it). Bounded by the values asked about, each looked up with `IN`; null
 * when no `eq` or `in` condition names a label, and then nothing needs to run.
 */
export function knownLabelsStatement(
  filters: readonly QueryFilter[],
  businesses: string[] | null,
): CompiledQuery | null {
  const named = [...namedLabels(filters)];
  if (named.length === 0) return null;
  const params: Record<string, unknown> = {};
  if (businesses !== null) params.businesses = businesses;
  const scope = businesses === null ? join([]) : sql`business IN ${BUSINESSES} AND `;
  const parts = named.map(([dimension, values], i) => {
    params[`k${i}`] = values;
    // Label dimensions are columns of facts under their own name (catalog.ts).
    const column = catalogSql(DIMENSIONS[dimension].sql(''));
    const label = raw(`'${dimension}'`);
    return sql`SELECT DISTINCT ${label} AS dimension, ${column} AS label FROM facts WHERE ${scope}${column} IN ${param(`k${i}`, 'Array(String)')}`;
  });
  return { sql: render(join(parts, '\nUNION ALL\n')).sql, params };
}
