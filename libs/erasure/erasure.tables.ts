import type { ColumnType } from 'kysely';
import type { Timestamp } from '../storage/database.ts';

/** A batch a projector had fixed when the business was marked (see 0013_business_erasures.sql). */
export interface ProjectionHold {
  name: string;
  xid: string;
  id: number;
}

export type ErasureStatus = 'running' | 'done';

export interface BusinessErasuresTable {
  business: string;
  /** Names this run of the erasure in logs and in the change log (0016_erasure_ids.sql). */
  id: ColumnType<string, string | undefined, string>;
  status: ErasureStatus;
  /** The next step to run (erasure-steps.ts); `done` once finished. */
  step: string;
  projection_holds: ColumnType<ProjectionHold[], string | undefined, string>;
  tokens_revoked: ColumnType<number, number | undefined, number>;
  tasks_deleted: ColumnType<number, number | undefined, number>;
  facts_deleted: ColumnType<number, number | undefined, number>;
  started_at: Timestamp;
  updated_at: Timestamp;
  finished_at: Date | null;
}

declare module '../storage/database.ts' {
  interface Database {
    business_erasures: BusinessErasuresTable;
  }
}
