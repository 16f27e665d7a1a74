import { type Selectable, sql, type Updateable } from 'kysely';
import { compiledShapes } from '../storage/compiled-shapes.ts';
import type { Db } from '../storage/database.ts';
import { type Fact, outboxRow } from './outbox.repository.ts';
import { TASK_COLUMNS, type TasksTable } from './task.tables.ts';
import type { TaskStatus } from './task-status.ts';

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

/**
 * The task and the facts describing it in one statement: atomic on its own (no transaction
 * needed) and one round trip. The facts are built from the row as it will be stored.
 */
export async function insertTaskWithFacts(
  db: Db,
  task: NewTask,
  factsOf: (row: TaskRow) => Fact[],
): Promise<TaskRow> {
  const row: TaskRow = {
    ...task,
    updated_at: task.created_at,
    completed_at: task.status === 'completed' ? task.created_at : null,
    created_project: task.project,
    created_assignee: task.assignee,
    created_status: task.status,
    first_completed_at: task.status === 'completed' ? task.created_at : null,
    started_at: task.status === 'in_progress' ? task.created_at : null,
    // A new task has no dependency yet: never blocked so far.
    blocked_ms: 0,
    blocked_since: null,
    version: 1,
  };
  const { rows } = await db.executeQuery(compiledTaskInsert({ db, row, facts: factsOf(row) }));
  const [stored] = rows;
  if (!stored) throw new Error('The task insert returned no row');
  return stored;
}

interface TaskInsertInput {
  db: Db;
  row: TaskRow;
  facts: Fact[];
}

/** Run for every task created: built and compiled once per number of facts. */
const compiledTaskInsert = compiledShapes<TaskInsertInput, TaskRow>({
  shape: ({ facts }) => String(facts.length),
  compile: ({ db, row, facts }) =>
    db
      .with('task', (qb) =>
        qb
          .insertInto('tasks')
          .values(
            Object.fromEntries(TASK_COLUMNS.map((column) => [column, row[column]])) as TaskRow,
          )
          .returning(TASK_COLUMNS),
      )
      .with('facts', (qb) => qb.insertInto('outbox').values(facts.map(outboxRow)).returning('id'))
      .selectFrom('task')
      .select(TASK_COLUMNS)
      .compile(),
  values: ({ row, facts }) => [
    ...TASK_COLUMNS.map((column) => row[column]),
    ...facts.flatMap((fact) => Object.values(outboxRow(fact))),
  ],
});

export async function findTask(db: Db, gid: string): Promise<TaskRow | undefined> {
  return db.selectFrom('tasks').select(TASK_COLUMNS).where('gid', '=', gid).executeTakeFirst();
}

/** Locks the row until the transaction ends, so concurrent updates see each other's status. */
export async function findTaskForUpdate(db: Db, gid: string): Promise<TaskRow | undefined> {
  return db
    .selectFrom('tasks')
    .select(TASK_COLUMNS)
    .where('gid', '=', gid)
    .forUpdate()
    .executeTakeFirst();
}

/** The gids are one array parameter: a hub's deletion looks up 100,000 dependents at once. */
export async function findTasks(db: Db, gids: readonly string[]): Promise<TaskRow[]> {
  if (gids.length === 0) return [];
  return db
    .selectFrom('tasks')
    .select(TASK_COLUMNS)
    .where('gid', '=', sql<string>`any(${[...gids]}::text[])`)
    .execute();
}

/** Applies `changes` to the version read under the row lock and raises the version. */
export async function updateTaskRow(
  db: Db,
  before: Pick<TaskRow, 'gid' | 'version'>,
  changes: Updateable<TasksTable>,
): Promise<TaskRow> {
  return db
    .updateTable('tasks')
    .set((eb) => ({ ...changes, version: eb('version', '+', 1) }))
    .where('gid', '=', before.gid)
    .where('version', '=', before.version)
    .returning(TASK_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function deleteTaskRow(db: Db, gid: string): Promise<void> {
  await db.deleteFrom('tasks').where('gid', '=', gid).execute();
}
