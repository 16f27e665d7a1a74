import { sql } from 'kysely';
import type { Db } from '../storage/database.ts';
import type { BlockedChange } from './outbox.repository.ts';
import type { TaskRow } from './task.repository.ts';
import { OPEN_STATUSES, type TaskStatus } from './task-status.ts';

/** The tasks a write may block or unblock: listed gids, and optionally every dependent of one. */
export interface BlockedScope {
  gids: readonly string[];
  /**
   * A task whose dependents are all in scope, read in the statement itself however many. Only
   * for a write that keeps the task's edges: a deletion lists the dependents in `gids`.
   */
  dependentsOf?: string;
}

/** One row of a count per label set. */
interface LabelCount {
  project: string | null;
  assignee: string | null;
  status: string;
  n: string | number;
}

/** Blocked tasks per label set (JSON `[project, assignee, status]` → count). */
export type BlockedCounts = Map<string, number>;

const isOpen = (status: TaskStatus) => (OPEN_STATUSES as readonly string[]).includes(status);

/**
 * Whether a change from `before` to `after` can change whether the tasks depending on it are
 * blocked: only a task that opens or closes (a deletion closes it) can.
 */
export const opensOrCloses = (before: TaskRow, after: TaskRow | undefined) =>
  isOpen(before.status) !== (after !== undefined && isOpen(after.status));

/**
 * How many tasks of `scope` are blocked (open with at least one open dependency) per label set,
 * as the transaction sees it now. A task that no longer exists counts nowhere. The caller holds
 * the business's graph lock, so no other write changes these states until it commits.
 *
 * Counted in the database: a hub's 100,000 dependents cost one statement and a few rows back,
 * never a row (or a bound parameter) each. The gid list is one array parameter.
 */
export async function blockedCounts(db: Db, scope: BlockedScope): Promise<BlockedCounts> {
  if (scope.gids.length === 0 && scope.dependentsOf === undefined) return new Map();
  const dependents =
    scope.dependentsOf === undefined
      ? sql``
      : sql` or t.gid in (select task_gid from task_dependencies where dependency_gid = ${scope.dependentsOf})`;
  const open = [...OPEN_STATUSES];
  const { rows } = await sql<LabelCount>`
    select t.project, t.assignee, t.status, count(*) as n
    from tasks t
    where (t.gid = any(${[...scope.gids]}::text[])${dependents})
      and t.status = any(${open}::text[])
      and exists (
        select 1 from task_dependencies e join tasks d on d.gid = e.dependency_gid
        where e.task_gid = t.gid and d.status = any(${open}::text[])
      )
    group by t.project, t.assignee, t.status`.execute(db);
  return new Map(rows.map((row) => [labelKey(row), Number(row.n)]));
}

/**
 * What opening (`sign` +1) or closing (−1, a deletion too) the open-or-closed task `gid` does
 * to its dependents, per label set: exactly the open dependents with no other open dependency
 * turn blocked or unblocked, and their labels stay. One statement however many dependents: it
 * returns a row per label set, not per task, and binds no list. Run it before the write.
 */
export async function dependentsFlip(db: Db, gid: string, sign: 1 | -1): Promise<BlockedChange[]> {
  const open = [...OPEN_STATUSES];
  const { rows } = await sql<LabelCount>`
    select t.project, t.assignee, t.status, count(*) as n
    from task_dependencies h join tasks t on t.gid = h.task_gid
    where h.dependency_gid = ${gid} and t.status = any(${open}::text[])
      and not exists (
        select 1 from task_dependencies e join tasks d on d.gid = e.dependency_gid
        where e.task_gid = h.task_gid and e.dependency_gid <> ${gid}
          and d.status = any(${open}::text[])
      )
    group by t.project, t.assignee, t.status`.execute(db);
  const after: BlockedCounts = new Map();
  for (const row of rows) after.set(labelKey(row), sign * Number(row.n));
  return blockedChanges(new Map(), after);
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
 * Runs `write` between two countings of the blocked tasks of `scope`, and returns its result
 * with the blocked changes it made.
 */
export async function trackBlocked<T>(
  db: Db,
  scope: BlockedScope,
  write: () => Promise<T>,
  /** Changes worked out otherwise (see `dependentsFlip`), summed with these per label set. */
  more: BlockedChange[] = [],
): Promise<[T, BlockedChange[]]> {
  const before = await blockedCounts(db, scope);
  const result = await write();
  const after = await blockedCounts(db, scope);
  for (const change of more) {
    const key = labelKey(change);
    after.set(key, (after.get(key) ?? 0) + change.change);
  }
  return [result, blockedChanges(before, after)];
}

/**
 * The largest change one entry carries: `facts.blocked_change` is `Array(Int8)`. A larger sum
 * is written as several entries under the same labels.
 */
export const MAX_ENTRY_CHANGE = 127;

/**
 * What a write did to blocked_tasks: per label set, the tasks blocked after it minus those
 * blocked before it. A task blocked throughout under the same labels, or never blocked, adds
 * nothing; one that changes labels while blocked counts −1 under the old and +1 under the new.
 * Entries name no task, so summing per label set (and dropping zero sums) changes nothing a
 * rollup adds up, and a write's entries are bounded by its label sets, not its tasks. Summed over
 * facts up to an instant, these give the blocked tasks per label set at that instant without
 * replaying any task's history. Decreases come first, then increases, each in label order.
 */
export function blockedChanges(before: BlockedCounts, after: BlockedCounts): BlockedChange[] {
  const sums: Array<[string, number]> = [];
  for (const key of new Set([...before.keys(), ...after.keys()])) {
    const sum = (after.get(key) ?? 0) - (before.get(key) ?? 0);
    if (sum !== 0) sums.push([key, sum]);
  }
  sums.sort(([a, x], [b, y]) => Math.sign(x) - Math.sign(y) || (a < b ? -1 : a > b ? 1 : 0));
  const changes: BlockedChange[] = [];
  for (const [key, sum] of sums) {
    const labels = fromLabelKey(key);
    for (let left = Math.abs(sum); left > 0; left -= MAX_ENTRY_CHANGE) {
      changes.push({ ...labels, change: Math.sign(sum) * Math.min(left, MAX_ENTRY_CHANGE) });
    }
  }
  return changes;
}

const labelKey = (row: { project: string | null; assignee: string | null; status: string }) =>
  JSON.stringify([row.project, row.assignee, row.status]);

function fromLabelKey(key: string): Omit<BlockedChange, 'change'> {
  const [project, assignee, status] = JSON.parse(key) as [string | null, string | null, string];
  return { project, assignee, status };
}
