import type { ColumnType, Kysely, Transaction } from 'kysely';

/** A timestamp column: read as a Date, written as a Date or ISO text, defaulted on insert. */
export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface SchemaMigrationsTable {
  name: string;
  applied_at: Timestamp;
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

/**
 * The Postgres schema as Kysely sees it. Storage declares only the tables of its own adapters;
 * each domain adds its tables from its `*.tables.ts` file by module augmentation
 * (`declare module '../storage/database.ts' { interface Database { … } }`), so storage never
 * imports a domain. Every such file lies under the tsconfig `include`, so a type check always
 * sees the whole schema.
 */
export interface Database {
  schema_migrations: SchemaMigrationsTable;
  idempotency_keys: IdempotencyKeysTable;
}

/** Repositories take either the database or an open transaction: the use case owns the transaction. */
export type Db = Kysely<Database> | Transaction<Database>;
