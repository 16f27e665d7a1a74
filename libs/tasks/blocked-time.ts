import { sql } from 'kysely';
import type { Db } from '../storage/database.ts';
import type { BlockedScope } from './blocked-changes.repository.ts';
import type { TaskRow } from './task.repository.ts';
import { OPEN_STATUSES } from './task-status.ts';

/**
 * Records when the tasks of `scope` started or stopped being blocked (open with at least one
 * open dependency), as the transaction sees them after a write: a task that turns blocked gets
 * `blocked_since`, one that stops adds the spell to `blocked_ms`. Tasks whose state stayed are
 * not touched (nor is any version: this is no change of the task). One statement however many
 * dependents; the caller holds the business's graph lock.
 */
export async function recordBlockedTime(db: Db, scope: BlockedScope, now: Date): Promise<void> {
  if (scope.gids.length === 0 && scope.dependentsOf === undefined) return;
  const dependents =
    scope.dependentsOf === undefined
      ? sql``
      : sql` or t.gid in (select task_gid from task_dependencies where dependency_gid = ${scope.dependentsOf})`;
  const open = [...OPEN_STATUSES];
  await sql`
    update tasks as u
    set blocked_ms = u.blocked_ms
          + case when s.blocked then 0 else extract(epoch from (${now}::timestamptz - u.blocked_since)) * 1000 end,
        blocked_since = case when s.blocked then ${now}::timestamptz end
    from (
      select t.gid, (t.status = any(${open}::text[]) and exists (
        select 1 from task_dependencies e join tasks d on d.gid = e.dependency_gid
        where e.task_gid = t.gid and d.status = any(${open}::text[]))) as blocked
      from tasks t
      where t.gid = any(${[...scope.gids]}::text[])${dependents}
    ) as s
    where u.gid = s.gid and (u.blocked_since is not null) <> s.blocked`.execute(db);
}

/**
 * The task's blocked time up to `now`, in milliseconds, from its row before a change that
 * closes it (a completion): null where the task predates the record.
 */
export function blockedMsAt(task: TaskRow, now: Date): number | null {
  if (task.blocked_ms === null) return null;
  const current = task.blocked_since ? now.getTime() - task.blocked_since.getTime() : 0;
  return task.blocked_ms + current;
}
