import type { ExpressionBuilder } from 'kysely';
import { businessScope } from '../auth/access.ts';
import type { Database, Db } from '../storage/database.ts';
import type { TaskRow } from './task.repository.ts';
import { TASK_COLUMNS } from './task.tables.ts';
import {
  RANGE_FIELDS,
  type TaskCollectionQuery,
  type TaskFilters,
} from './task-collection.schema.ts';
import { type LabelFilter, RANGE_OP_NAMES, RANGE_OPS, rangeKey } from './task-filters.ts';

export interface TaskCollectionPage {
  rows: TaskRow[];
  total: number;
}

/** `name ILIKE %text%` with the text taken literally: its own `%`, `_` and `\` match themselves. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

/** `column IN (values)`, with `null` in the values meaning `column IS NULL`. */
function labelIn(column: 'project' | 'assignee', values: LabelFilter) {
  return (eb: ExpressionBuilder<Database, 'tasks'>) => {
    const named = values.filter((value): value is string => value !== null);
    const alternatives = [];
    if (named.length > 0) alternatives.push(eb(column, 'in', named));
    if (named.length < values.length) alternatives.push(eb(column, 'is', null));
    return eb.or(alternatives);
  };
}

/**
 * One page of tasks within `businesses` (null: any). Sort columns come only from the schema's
 * enum; gid breaks ties so no row sits on two pages.
 */
export async function listTasks(
  db: Db,
  query: TaskCollectionQuery,
  filters: TaskFilters,
  businesses: readonly string[] | null,
): Promise<TaskCollectionPage> {
  const scope = businessScope(businesses, query.business);
  if (scope !== null && scope.length === 0) return { rows: [], total: 0 };
  const statements = taskCollectionStatements(db, query, filters, scope);
  const { total } = await statements.count.executeTakeFirstOrThrow();
  const rows = await statements.page.execute();
  return { rows, total: Number(total) };
}

/**
 * The two statements of a task-list page, the total and the rows, as builders: the benchmark
 * compiles the very same ones to send them straight to Postgres.
 */
export function taskCollectionStatements(
  db: Db,
  query: TaskCollectionQuery,
  filters: TaskFilters,
  scope: readonly string[] | null,
) {
  let filtered = db.selectFrom('tasks');
  if (scope !== null) filtered = filtered.where('business', 'in', scope);
  if (filters.status !== undefined) filtered = filtered.where('status', 'in', filters.status);
  if (filters.project !== undefined) filtered = filtered.where(labelIn('project', filters.project));
  if (filters.assignee !== undefined)
    filtered = filtered.where(labelIn('assignee', filters.assignee));
  // Answered from the trigram index on name (sql/postgres/0006_task_search.sql).
  if (query.q !== undefined) filtered = filtered.where('name', 'ilike', containsPattern(query.q));
  for (const field of RANGE_FIELDS) {
    for (const op of RANGE_OP_NAMES) {
      const bound = filters[rangeKey(field, op)];
      if (bound !== undefined) filtered = filtered.where(field, RANGE_OPS[op].sql, bound);
    }
  }

  return {
    count: filtered.select((eb) => eb.fn.countAll<number>().as('total')),
    page: filtered
      .select(TASK_COLUMNS)
      // Tasks without a due date go last either way: "soonest/latest due" lists lead with dates.
      .orderBy(query.sort, (ob) => (query.order === 'asc' ? ob.asc() : ob.desc()).nullsLast())
      .orderBy('gid', query.order)
      .limit(query.per_page)
      .offset((query.page - 1) * query.per_page),
  };
}
