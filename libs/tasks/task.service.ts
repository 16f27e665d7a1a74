import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { mayAccessBusiness, type Principal } from '../auth/principal.ts';
import { AppError } from '../platform/errors.ts';
import type { Database, TaskStatus } from '../storage/database.ts';
import { appendFacts } from './outbox.repository.ts';
import { findTask, insertTask, type TaskRow } from './task.repository.ts';
import { taskFact } from './task-facts.ts';

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

export async function createTask(deps: TaskDeps, input: CreateTaskInput): Promise<TaskRow> {
  const now = deps.now();
  const task = await deps.db.transaction().execute(async (trx) => {
    const row = await insertTask(trx, {
      gid: randomUUID(),
      business: input.business,
      name: input.name,
      project: input.project ?? null,
      assignee: input.assignee ?? null,
      status: input.status ?? 'open',
      due_on: input.due_on ?? null,
      created_at: now,
    });
    const facts = [taskFact('task_created', row, now)];
    if (row.status === 'completed') facts.push(taskFact('task_completed', row, now));
    await appendFacts(trx, facts);
    return row;
  });
  deps.factsCommitted();
  return task;
}

/** A task outside the caller's businesses is answered exactly like a missing one. */
export async function getTask(deps: TaskDeps, gid: string, principal: Principal): Promise<TaskRow> {
  const task = await findTask(deps.db, gid);
  if (!task || !mayAccessBusiness(principal, task.business)) {
    throw new AppError('not_found', `Task ${gid} does not exist.`);
  }
  return task;
}
