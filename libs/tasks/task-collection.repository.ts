import type { ExpressionBuilder, SelectQueryBuilder } from 'kysely';
import { businessScope } from '../auth/access.ts';
import type { Database, Db } from '../storage/database.ts';
import type { TaskRow } from './task.repository.ts';
import { TASK_COLUMNS } from './task.tables.ts';
import {
  DEFAULT_TASK_LIST_MAX_DEPTH,
  pageBeyondDepth,
  RANGE_FIELDS,
  type TaskCollectionQuery,
  type TaskFilters,
} from './task-collection.schemas.ts';
import { type LabelFilter, RANGE_OP_NAMES, RANGE_OPS, rangeKey } from './task-filters.ts';

export interface TaskCollectionPage {
  rows: TaskRow[];
  /** Tasks matching, counted no further than the depth bound. */
  total: number;
  /** More tasks match than the depth bound: `total` is the bound, and pages stop there. */
  totalIsLowerBound: boolean;
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
 * enum; gid breaks ties so no row sits on two pages. Counting stops one past `maxDepth`: a list
 * that long answers pages within the bound only, so no page reads more than about `maxDepth`
 * rows, however many a business holds.
 */
export async function listTasks(
  db: Db,
  query: TaskCollectionQuery,
  filters: TaskFilters,
  businesses: readonly string[] | null,
  maxDepth: number = DEFAULT_TASK_LIST_MAX_DEPTH,
): Promise<TaskCollectionPage> {
  const scope = businessScope(businesses, query.business);
  if (scope !== null && scope.length === 0) return { rows: [], total: 0, totalIsLowerBound: false };
  const statements = taskCollectionStatements(db, query, filters, scope, maxDepth);
  const counted = Number((await statements.count.executeTakeFirstOrThrow()).total);
  const totalIsLowerBound = counted > maxDepth;
  if (totalIsLowerBound && query.page * query.per_page > maxDepth) {
    throw pageBeyondDepth(query, maxDepth);
  }
  // Past the end of a list within the bound: nothing to read, however large the offset.
  const rows = (query.page - 1) * query.per_page >= counted ? [] : await statements.page.execute();
  return { rows, total: Math.min(counted, maxDepth), totalIsLowerBound };
}

/**
 * The two statements of a task-list page, the bounded total and the rows, as builders: the
 * benchmark compiles the very same ones to send them straight to Postgres.
 */
export function taskCollectionStatements(
  db: Db,
  query: TaskCollectionQuery,
  filters: TaskFilters,
  scope: readonly string[] | null,
  maxDepth: number = DEFAULT_TASK_LIST_MAX_DEPTH,
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

  // Only due_on has nulls: undated tasks go last either way ("soonest/latest due" lists lead with
  // dates). The other sort columns order plainly, as their indexes do
  // (sql/postgres/0010_task_list_indexes.sql); a nulls clause on them would defeat the index.
  const sorted = <Q extends SelectQueryBuilder<Database, 'tasks', object>>(builder: Q): Q =>
    builder
      .orderBy(query.sort, (ob) => {
        const ordered = query.order === 'asc' ? ob.asc() : ob.desc();
        return query.sort === 'due_on' ? ordered.nullsLast() : ordered;
      })
      .orderBy('gid', query.order) as Q;

  return {
    // One past the bound tells "more than maxDepth" without reading the rest of the business.
    count: db
      .selectFrom(
        filtered
          .select('gid')
          .limit(maxDepth + 1)
          .as('bounded'),
      )
      .select((eb) => eb.fn.countAll<number>().as('total')),
    // The skipped rows are passed over in the sort's index (it carries the equality filters), and
    // only the page's own rows are read whole.
    page: sorted(
      db
        .selectFrom('tasks')
        .select(TASK_COLUMNS)
        .where(
          'gid',
          'in',
          sorted(filtered.select('gid'))
            .limit(query.per_page)
            .offset((query.page - 1) * query.per_page),
        ),
    ),
  };
}
