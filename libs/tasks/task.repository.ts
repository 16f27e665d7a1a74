import type { Selectable, Updateable } from 'kysely';
import type { Db, TaskStatus, TasksTable } from '../storage/database.ts';

export type TaskRow = Selectable<TasksTable>;

export interface NewTask {
  gid: string;
  business: string;
  name: string;
  project: string | null;
  assignee: string | null;
  status: TaskStatus;
  due_on: string | null;
  created_at: Date;
}

export async function insertTask(db: Db, task: NewTask): Promise<TaskRow> {
  return db
    .insertInto('tasks')
    .values({
      ...task,
      updated_at: task.created_at,
      completed_at: task.status === 'completed' ? task.created_at : null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findTask(db: Db, gid: string): Promise<TaskRow | undefined> {
  return db.selectFrom('tasks').selectAll().where('gid', '=', gid).executeTakeFirst();
}

/** Locks the row until the transaction ends, so concurrent updates see each other's status. */
export async function findTaskForUpdate(db: Db, gid: string): Promise<TaskRow | undefined> {
  return db.selectFrom('tasks').selectAll().where('gid', '=', gid).forUpdate().executeTakeFirst();
}

export async function findTasks(db: Db, gids: readonly string[]): Promise<TaskRow[]> {
  if (gids.length === 0) return [];
  return db.selectFrom('tasks').selectAll().where('gid', 'in', gids).execute();
}

export async function updateTaskRow(
  db: Db,
  gid: string,
  changes: Updateable<TasksTable>,
): Promise<TaskRow> {
  return db
    .updateTable('tasks')
    .set(changes)
    .where('gid', '=', gid)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteTaskRow(db: Db, gid: string): Promise<void> {
  await db.deleteFrom('tasks').where('gid', '=', gid).execute();
}
