import type { ColumnType, Generated } from 'kysely';
import type { Timestamp } from '../storage/database.ts';
import type { TaskStatus } from './task-status.ts';

export interface TasksTable {
  gid: string;
  business: string;
  name: string;
  project: string | null;
  assignee: string | null;
  status: ColumnType<TaskStatus, TaskStatus | undefined, TaskStatus>;
  due_on: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  completed_at: Date | null;
  /** The labels the task was created with, carried by its completion facts. */
  created_project: string | null;
  created_assignee: string | null;
  created_status: TaskStatus | null;
  /** Set by the first completion and kept through any reopening. */
  first_completed_at: Date | null;
  /** Set by the first move to in_progress and kept through any reopening: work time starts here. */
  started_at: Date | null;
  /**
   * Milliseconds spent blocked (open with an open dependency) in spells that ended, and the
   * start of the current one: blocked time at completion. Null total: a task from before.
   */
  blocked_ms: number | null;
  blocked_since: Date | null;
  /** Raised by each change of the record; the task's ETag. */
  version: ColumnType<number, number | undefined, number>;
}

/** The task members a reader may ask for beside gid and name (`opt_fields`), in that order. */
export const TASK_MEMBER_COLUMNS = [
  'business',
  'project',
  'assignee',
  'status',
  'due_on',
  'created_at',
  'updated_at',
  'completed_at',
] as const satisfies ReadonlyArray<keyof TasksTable>;

/**
 * Every column of `tasks`, named: a statement that lists them instead of `*` runs as a prepared
 * statement (libs/storage/postgres.ts), which Postgres parses and plans once per connection.
 * A column left out fails to compile: the task reads return `TaskRow`, every column of it.
 */
export const TASK_COLUMNS = [
  'gid',
  'name',
  ...TASK_MEMBER_COLUMNS,
  'created_project',
  'created_assignee',
  'created_status',
  'first_completed_at',
  'started_at',
  'blocked_ms',
  'blocked_since',
  'version',
] as const satisfies ReadonlyArray<keyof TasksTable>;

export interface TaskDependenciesTable {
  id: Generated<number>;
  task_gid: string;
  dependency_gid: string;
  business: string;
  created_at: Timestamp;
}

/** Facts appended with each write, read back by the projector with its own SQL. */
export interface OutboxTable {
  id: Generated<number>;
  xid: Generated<string>;
  kind: string;
  business: string;
  task_gid: string;
  payload: ColumnType<Record<string, unknown>, string, string>;
  occurred_at: Timestamp;
  /** The writing request's W3C traceparent, for the projector's span links. */
  trace_context: ColumnType<string | null, string | null | undefined, string | null>;
}

/** Named server-side secrets; the pagination cursor key is kept here (see cursor-key.ts). */
export interface ServerSecretsTable {
  name: string;
  secret: string;
  created_at: Timestamp;
}

declare module '../storage/database.ts' {
  interface Database {
    tasks: TasksTable;
    task_dependencies: TaskDependenciesTable;
    outbox: OutboxTable;
    server_secrets: ServerSecretsTable;
  }
}
