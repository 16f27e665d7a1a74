import { AppError } from '../platform/errors.ts';
import type { Db } from '../storage/database.ts';
import type { TaskRow } from './task.repository.ts';
import type { TaskCollectionQuery } from './task-collection.schema.ts';

export interface TaskCollectionPage {
  rows: TaskRow[];
  total: number;
}

/**
 * One page of tasks within `businesses` (null: any). Sort columns come only from the schema's
 * enum; gid breaks ties so no row sits on two pages.
 */
export async function listTasks(
  db: Db,
  query: TaskCollectionQuery,
  businesses: readonly string[] | null,
): Promise<TaskCollectionPage> {
  let scope: readonly string[] | null = businesses;
  if (query.business !== undefined) {
    // Same answer as for a business that does not exist: the caller learns nothing.
    if (businesses !== null && !businesses.includes(query.business)) {
      throw new AppError('not_found', `Business ${query.business} does not exist.`);
    }
    scope = [query.business];
  }
  if (scope !== null && scope.length === 0) return { rows: [], total: 0 };

  let filtered = db.selectFrom('tasks');
  if (scope !== null) filtered = filtered.where('business', 'in', scope);
  if (query.status !== undefined) filtered = filtered.where('status', '=', query.status as never);
  if (query.project !== undefined) filtered = filtered.where('project', '=', query.project);
  if (query.assignee !== undefined) filtered = filtered.where('assignee', '=', query.assignee);
  const createdFrom = query['created_at[gte]'];
  const createdTo = query['created_at[lt]'];
  if (createdFrom !== undefined)
    filtered = filtered.where('created_at', '>=', new Date(createdFrom));
  if (createdTo !== undefined) filtered = filtered.where('created_at', '<', new Date(createdTo));
  const dueFrom = query['due_on[gte]'];
  const dueTo = query['due_on[lt]'];
  if (dueFrom !== undefined) filtered = filtered.where('due_on', '>=', dueFrom);
  if (dueTo !== undefined) filtered = filtered.where('due_on', '<', dueTo);

  const { total } = await filtered
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .executeTakeFirstOrThrow();
  const rows = await filtered
    .selectAll()
    // Tasks without a due date go last either way: "soonest/latest due" lists lead with dates.
    .orderBy(query.sort, (ob) => (query.order === 'asc' ? ob.asc() : ob.desc()).nullsLast())
    .orderBy('gid', query.order)
    .limit(query.per_page)
    .offset((query.page - 1) * query.per_page)
    .execute();
  return { rows, total: Number(total) };
}
