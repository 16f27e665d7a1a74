import type { ColumnType, Generated, Kysely, Transaction } from 'kysely';

export type TaskStatus = 'open' | 'in_progress' | 'completed' | 'cancelled';
export const TASK_STATUSES: readonly TaskStatus[] = [
  'open',
  'in_progress',
  'completed',
  'cancelled',
];

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

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
  /** Raised by each change of the record; the task's ETag. */
  version: ColumnType<number, number | undefined, number>;
}

export interface TaskDependenciesTable {
  id: Generated<number>;
  task_gid: string;
  dependency_gid: string;
  business: string;
  created_at: Timestamp;
}

export interface OutboxTable {
  id: Generated<number>;
  xid: Generated<string>;
  kind: string;
  business: string;
  task_gid: string;
  payload: ColumnType<Record<string, unknown>, string, string>;
  occurred_at: Timestamp;
}

export interface ProjectorCheckpointsTable {
  name: string;
  cursor_xid: ColumnType<string, string | undefined, string>;
  cursor_id: ColumnType<number, number | undefined, number>;
  pending_xid: string | null;
  pending_id: number | null;
  pending_count: number | null;
  projected_at: Date | null;
  updated_at: Timestamp;
}

export interface ApiTokensTable {
  id: string;
  name: string;
  token_hash: string;
  kind: 'user' | 'service_account';
  scopes: string[];
  businesses: string[];
  created_at: Timestamp;
  expires_at: Date | null;
  revoked_at: Date | null;
}

export interface IdempotencyKeysTable {
  /** `token:<id>` or `master`: keys are scoped per principal. */
  principal: string;
  key: string;
  fingerprint: string;
  claim_id: string;
  status: 'in_progress' | 'completed';
  response_status: number | null;
  /** JSON text of the route's own headers (Location…), replayed with the body. */
  response_headers: string | null;
  /** JSON text, possibly sealed (see libs/idempotency/idempotency-seal.ts). */
  response_body: string | null;
  created_at: Date;
  expires_at: Date;
}

export interface ServerSecretsTable {
  name: string;
  secret: string;
  created_at: Timestamp;
}

export interface SchemaMigrationsTable {
  name: string;
  applied_at: Timestamp;
}

export interface Database {
  tasks: TasksTable;
  task_dependencies: TaskDependenciesTable;
  outbox: OutboxTable;
  projector_checkpoints: ProjectorCheckpointsTable;
  schema_migrations: SchemaMigrationsTable;
  api_tokens: ApiTokensTable;
  server_secrets: ServerSecretsTable;
  idempotency_keys: IdempotencyKeysTable;
}

/** Repositories take either the database or an open transaction: the use case owns the transaction. */
export type Db = Kysely<Database> | Transaction<Database>;
