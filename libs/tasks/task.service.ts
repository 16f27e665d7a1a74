import { randomUUID } from 'node:crypto';
import type { Kysely, Updateable } from 'kysely';
import { visibleOrNotFound } from '../auth/access.ts';
import type { Principal } from '../auth/principal.ts';
import type { Database, Db } from '../storage/database.ts';
import { dependentsFlip, opensOrCloses, trackBlocked } from './blocked-changes.repository.ts';
import { recordBlockedTime } from './blocked-time.ts';
import { deleteEdgesOf, lockBusinessGraph } from './dependency.repository.ts';
import { appendFacts, type Fact } from './outbox.repository.ts';
import {
  deleteTaskRow,
  findTask,
  findTaskForUpdate,
  findTasks,
  insertTaskWithFacts,
  type NewTask,
  type TaskRow,
  updateTaskRow,
} from './task.repository.ts';
import type { TasksTable } from './task.tables.ts';
import { UpdateRefused } from './task-errors.ts';
import { checkIfMatch, type IfMatch } from './task-etag.ts';
import { taskFact, withBlockedChunks } from './task-facts.ts';
import { OPEN_STATUSES, type TaskStatus } from './task-status.ts';

export interface TaskDeps {
  db: Kysely<Database>;
  now: () => Date;
  /** Registered on each write's unit of work: the projector picks the new facts up at once. */
  wakeProjector: () => void;
}

export interface CreateTaskInput {
  business: string;
  name: string;
  project?: string | null;
  assignee?: string | null;
  status?: TaskStatus;
  due_on?: string | null;
}

export interface UpdateTaskInput {
  /** Accepted only when it names the task's own business: a task never moves. */
  business?: string;
  name?: string;
  project?: string | null;
  assignee?: string | null;
  status?: TaskStatus;
  due_on?: string | null;
}

/** Inserts the task and its facts in the caller's transaction. */
export async function createTask(trx: Db, input: CreateTaskInput, now: Date): Promise<TaskRow> {
  const task: NewTask = {
    gid: randomUUID(),
    business: input.business,
    name: input.name,
    project: input.project ?? null,
    assignee: input.assignee ?? null,
    status: input.status ?? 'open',
    due_on: input.due_on ?? null,
    created_at: now,
  };
  const factsOf = (row: TaskRow) => {
    const facts = [taskFact('task_created', row, now)];
    if (row.status === 'completed') facts.push(taskFact('task_completed', row, now));
    return facts;
  };
  // Callers run it inside a transaction even though it is one statement: when Postgres stops
  // answering, the client drops the connection and the server rolls back a transaction whose
  // COMMIT never came, whereas a lone statement still in the socket would commit after the 504.
  return insertTaskWithFacts(trx, task, factsOf);
}

/** A task outside the caller's businesses is answered exactly like a missing one. */
export async function getTask(db: Db, gid: string, principal: Principal): Promise<TaskRow> {
  return visibleTask(await findTask(db, gid), gid, principal);
}

const visibleTask = (task: TaskRow | undefined, gid: string, principal: Principal): TaskRow =>
  visibleOrNotFound(task, principal, `Task ${gid}`);

/** The members a PUT may change; `business` is only ever accepted unchanged. */
const UPDATABLE = ['name', 'project', 'assignee', 'status', 'due_on'] as const;

/** Asana-style: only the members sent change. No change at all writes nothing. */
export async function updateTask(
  trx: Db,
  gid: string,
  input: UpdateTaskInput,
  principal: Principal,
  now: Date,
  ifMatch?: IfMatch,
): Promise<TaskRow> {
  // Before any lookup: the update alone decides this, whether or not the task exists (the
  // published document says so too).
  if (!UPDATABLE.some((member) => input[member] !== undefined)) {
    throw new UpdateRefused(`Nothing to change: send at least one of ${UPDATABLE.join(', ')}`);
  }
  if (BLOCKED_LABELS.some((member) => input[member] !== undefined)) {
    await lockGraphOf(trx, gid, principal);
  }
  // Compared under the row lock: of two writes holding the same version, the second to get
  // the lock finds the version the first one left, and fails.
  const before = visibleTask(await findTaskForUpdate(trx, gid), gid, principal);
  checkIfMatch(ifMatch, before);
  if (input.business !== undefined && input.business !== before.business) {
    throw new UpdateRefused('A task cannot move to another business', 'business');
  }
  const changes: Updateable<TasksTable> = {};
  for (const member of UPDATABLE) {
    const value = input[member];
    if (value !== undefined && value !== before[member])
      Object.assign(changes, { [member]: value });
  }
  let after = before;
  if (Object.keys(changes).length > 0) {
    if (changes.status !== undefined) {
      changes.completed_at = changes.status === 'completed' ? now : null;
      if (changes.status === 'completed' && !before.first_completed_at) {
        changes.first_completed_at = now;
      }
      if (changes.status === 'in_progress' && !before.started_at) changes.started_at = now;
    }
    const labelled = BLOCKED_LABELS.some((member) => member in changes);
    const next = { ...before, ...changes } as TaskRow;
    // The task's own state is counted before and after; its dependents' change is worked out
    // in one statement before the write, whatever their number.
    const flip = labelled && opensOrCloses(before, next);
    const dependents = flip
      ? await dependentsFlip(trx, gid, isOpenStatus(next.status) ? 1 : -1)
      : [];
    const [row, blockedChanges] = await trackBlocked(
      trx,
      { gids: labelled ? [gid] : [] },
      () => updateTaskRow(trx, before, { ...changes, updated_at: now }),
      dependents,
    );
    if (flip || labelled) {
      await recordBlockedTime(trx, { gids: [gid], ...(flip ? { dependentsOf: gid } : {}) }, now);
    }
    after = row;
    const facts = withBlockedChunks(
      taskFact('task_updated', after, now, { previous: before, blockedChanges }),
    );
    if (after.status === 'completed' && before.status !== 'completed') {
      facts.push(taskFact('task_completed', after, now, { previous: before }));
    }
    await appendFacts(trx, facts);
  }
  return after;
}

const isOpenStatus = (status: TaskStatus) => (OPEN_STATUSES as readonly string[]).includes(status);

/** The members that decide whether and under which labels a task counts as blocked. */
const BLOCKED_LABELS = ['status', 'project', 'assignee'] as const;

/**
 * Takes the graph lock of the task's business (before any row lock, in the order every graph
 * write takes them): a task's blocked state depends on other tasks' states, so writes that can
 * change one run one after another within a business, each seeing what the last committed.
 */
async function lockGraphOf(trx: Db, gid: string, principal: Principal): Promise<void> {
  const task = visibleTask(await findTask(trx, gid), gid, principal);
  await lockBusinessGraph(trx, task.business);
}

/** Removes the task and every edge touching it; each removed edge gets its own fact. */
export async function deleteTask(
  trx: Db,
  gid: string,
  principal: Principal,
  now: Date,
  ifMatch?: IfMatch,
): Promise<void> {
  await lockGraphOf(trx, gid, principal);
  const task = visibleTask(await findTaskForUpdate(trx, gid), gid, principal);
  checkIfMatch(ifMatch, task);
  // Worked out before the edges go: an open task's deletion unblocks the dependents it alone held.
  const dependents = opensOrCloses(task, undefined) ? await dependentsFlip(trx, gid, -1) : [];
  const [edges, blockedChanges] = await trackBlocked(
    trx,
    { gids: [gid] },
    async () => {
      const removed = await deleteEdgesOf(trx, gid);
      await deleteTaskRow(trx, gid);
      return removed;
    },
    dependents,
  );
  // Edge facts are attributed to the dependent task, as their state stands now.
  const others = await findTasks(
    trx,
    [...new Set(edges.map((edge) => edge.task_gid))].filter((other) => other !== gid),
  );
  await recordBlockedTime(trx, { gids: others.map((other) => other.gid) }, now);
  const byGid = new Map<string, TaskRow>([[gid, task], ...others.map((t) => [t.gid, t] as const)]);
  const facts: Fact[] = [];
  for (const edge of edges) {
    const dependent = byGid.get(edge.task_gid);
    if (!dependent) continue;
    facts.push(
      taskFact('dependency_removed', dependent, now, { dependencyGid: edge.dependency_gid }),
    );
  }
  facts.push(
    ...withBlockedChunks(taskFact('task_deleted', task, now, { previous: task, blockedChanges })),
  );
  await appendFacts(trx, facts);
}
