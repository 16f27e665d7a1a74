import type { Selectable } from 'kysely';
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
