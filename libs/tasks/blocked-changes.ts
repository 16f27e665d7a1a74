import type { Db } from '../storage/database.ts';
import type { BlockedChange } from './outbox.repository.ts';
import type { TaskRow } from './task.repository.ts';
import { OPEN_STATUSES, type TaskStatus } from './task-status.ts';

/** Where a task counts toward blocked_tasks: its labels, and whether it is blocked at all. */
interface BlockedState {
  project: string | null;
  assignee: string | null;
  status: TaskStatus;
  blocked: boolean;
}

/** Before and after one write, for every task whose blocked state the write may change. */
export type BlockedStates = Map<string, BlockedState>;

const isOpen = (status: TaskStatus) => (OPEN_STATUSES as readonly string[]).includes(status);

/**
 * Whether a change from `before` to `after` can change whether the tasks depending on it are
 * blocked: only a task that opens or closes (a deletion closes it) can.
 */
export const opensOrCloses = (before: TaskRow, after: TaskRow | undefined) =>
  isOpen(before.status) !== (after !== undefined && isOpen(after.status));

/**
 * The blocked state of `gids` as the transaction sees it now: blocked when open with at least
 * one open dependency. A task that no longer exists is absent (not blocked). The caller holds
 * the business's graph lock, so no other write changes these states until it commits.
 */
export async function blockedStates(db: Db, gids: readonly string[]): Promise<BlockedStates> {
  if (gids.length === 0) return new Map();
  const rows = await db
    .selectFrom('tasks as t')
    .select(['t.gid', 't.project', 't.assignee', 't.status'])
    .select((eb) =>
      eb
        .exists(
          eb
            .selectFrom('task_dependencies as e')
            .innerJoin('tasks as d', 'd.gid', 'e.dependency_gid')
            .select('e.id')
            .whereRef('e.task_gid', '=', 't.gid')
            .where('d.status', 'in', OPEN_STATUSES),
        )
        .as('open_dependency'),
    )
    .where('t.gid', 'in', gids)
    .execute();
  return new Map(
    rows.map((row) => [
      row.gid,
      {
        project: row.project,
        assignee: row.assignee,
        status: row.status,
        blocked: isOpen(row.status) && Boolean(row.open_dependency),
      },
    ]),
  );
}

/** The tasks that depend on `gid`, in gid order. */
export async function dependentsOf(db: Db, gid: string): Promise<string[]> {
  const rows = await db
    .selectFrom('task_dependencies')
    .select('task_gid')
    .where('dependency_gid', '=', gid)
    .orderBy('task_gid')
    .execute();
  return rows.map((row) => row.task_gid);
}

/**
 * Runs `write` between two readings of the blocked state of `gids`, and returns its result with
 * the blocked changes it made.
 */
export async function trackBlocked<T>(
  db: Db,
  gids: readonly string[],
  write: () => Promise<T>,
): Promise<[T, BlockedChange[]]> {
  const before = await blockedStates(db, gids);
  const result = await write();
  return [result, blockedChanges(before, await blockedStates(db, gids))];
}

/**
 * What a write did to blocked_tasks: a task blocked before counts −1 under its old labels, one
 * blocked after +1 under its new ones; a task blocked throughout under the same labels, or never
 * blocked, adds nothing. Summed over facts up to an instant, these give the blocked tasks per
 * label set at that instant without replaying any task's history.
 */
export function blockedChanges(before: BlockedStates, after: BlockedStates): BlockedChange[] {
  const changes: BlockedChange[] = [];
  for (const gid of new Set([...before.keys(), ...after.keys()])) {
    const was = before.get(gid);
    const is = after.get(gid);
    if (was?.blocked && is?.blocked && sameLabels(was, is)) continue;
    if (was?.blocked) changes.push(change(was, -1));
    if (is?.blocked) changes.push(change(is, 1));
  }
  return changes;
}

const sameLabels = (a: BlockedState, b: BlockedState) =>
  a.project === b.project && a.assignee === b.assignee && a.status === b.status;

const change = (state: BlockedState, sign: 1 | -1): BlockedChange => ({
  project: state.project,
  assignee: state.assignee,
  status: state.status,
  change: sign,
});
