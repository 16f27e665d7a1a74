import { randomUUID } from 'node:crypto';
import type { Kysely, Updateable } from 'kysely';
import { mayAccessBusiness, type Principal } from '../auth/principal.ts';
import { AppError, ValidationError } from '../platform/errors.ts';
import type { Database, TaskStatus, TasksTable } from '../storage/database.ts';
import { deleteEdgesOf } from './dependency.repository.ts';
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
import { taskFact } from './task-facts.ts';
import type { WriteOptions } from './write-hooks.ts';

export interface TaskDeps {
  db: Kysely<Database>;
  now: () => Date;
  /** Told after a commit that wrote facts, so the projector can pick them up at once. */
  factsCommitted: () => void;
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

export async function createTask(
  deps: TaskDeps,
  input: CreateTaskInput,
  options: WriteOptions<TaskRow> = {},
): Promise<TaskRow> {
  const now = deps.now();
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
  const { beforeCommit } = options;
  const created = beforeCommit
    ? await deps.db.transaction().execute(async (trx) => {
        const row = await insertTaskWithFacts(trx, task, factsOf);
        await beforeCommit(trx, row);
        return row;
      })
    : await insertTaskWithFacts(deps.db, task, factsOf);
  deps.factsCommitted();
  return created;
}

/** A task outside the caller's businesses is answered exactly like a missing one. */
export async function getTask(deps: TaskDeps, gid: string, principal: Principal): Promise<TaskRow> {
  return visibleOrNotFound(await findTask(deps.db, gid), gid, principal);
}

export function visibleOrNotFound(
  task: TaskRow | undefined,
  gid: string,
  principal: Principal,
): TaskRow {
  if (!task || !mayAccessBusiness(principal, task.business)) {
    throw new AppError('not_found', `Task ${gid} does not exist.`);
  }
  return task;
}

/** Asana-style: only the members sent change. No change at all writes nothing. */
export async function updateTask(
  deps: TaskDeps,
  gid: string,
  input: UpdateTaskInput,
  principal: Principal,
  options: WriteOptions<TaskRow> = {},
): Promise<TaskRow> {
  const now = deps.now();
  let wroteFacts = false;
  const task = await deps.db.transaction().execute(async (trx) => {
    const before = visibleOrNotFound(await findTaskForUpdate(trx, gid), gid, principal);
    if (input.business !== undefined && input.business !== before.business) {
      throw ValidationError.at(
        ['body', 'business'],
        'A task cannot move to another business',
        'value_error',
      );
    }
    const changes: Updateable<TasksTable> = {};
    for (const member of ['name', 'project', 'assignee', 'status', 'due_on'] as const) {
      const value = input[member];
      if (value !== undefined && value !== before[member])
        Object.assign(changes, { [member]: value });
    }
    let after = before;
    if (Object.keys(changes).length > 0) {
      if (changes.status !== undefined) {
        changes.completed_at = changes.status === 'completed' ? now : null;
      }
      after = await updateTaskRow(trx, gid, { ...changes, updated_at: now });
      const facts = [taskFact('task_updated', after, now, { previous: before })];
      if (after.status === 'completed' && before.status !== 'completed') {
        facts.push(taskFact('task_completed', after, now, { previous: before }));
      }
      await appendFacts(trx, facts);
      wroteFacts = true;
    }
    await options.beforeCommit?.(trx, after);
    return after;
  });
  if (wroteFacts) deps.factsCommitted();
  return task;
}

/** Removes the task and every edge touching it; each removed edge gets its own fact. */
export async function deleteTask(
  deps: TaskDeps,
  gid: string,
  principal: Principal,
  options: WriteOptions<TaskRow> = {},
): Promise<void> {
  const now = deps.now();
  await deps.db.transaction().execute(async (trx) => {
    const task = visibleOrNotFound(await findTaskForUpdate(trx, gid), gid, principal);
    const edges = await deleteEdgesOf(trx, gid);
    // Edge facts are attributed to the dependent task, as their state stands now.
    const others = await findTasks(
      trx,
      [...new Set(edges.map((edge) => edge.task_gid))].filter((other) => other !== gid),
    );
    const byGid = new Map<string, TaskRow>([
      [gid, task],
      ...others.map((t) => [t.gid, t] as const),
    ]);
    const facts: Fact[] = [];
    for (const edge of edges) {
      const dependent = byGid.get(edge.task_gid);
      if (!dependent) continue;
      facts.push(
        taskFact('dependency_removed', dependent, now, { dependencyGid: edge.dependency_gid }),
      );
    }
    facts.push(taskFact('task_deleted', task, now, { previous: task }));
    await deleteTaskRow(trx, gid);
    await appendFacts(trx, facts);
    await options.beforeCommit?.(trx, task);
  });
  deps.factsCommitted();
}
