import type { ColumnType } from 'kysely';
import type { Timestamp } from '../storage/database.ts';

/** How far the outbox has been pruned (one row; see 0012_outbox_retention.sql). */
export interface OutboxRetentionTable {
  singleton: ColumnType<boolean, boolean | undefined, never>;
  horizon_xid: ColumnType<string, string | undefined, string>;
  horizon_id: ColumnType<number, number | undefined, number>;
  max_removed_id: ColumnType<number, number | undefined, number>;
  removed: ColumnType<number, number | undefined, number>;
  updated_at: Timestamp;
}

/** Where the live projector's cursor stood at each sampled instant. */
export interface OutboxRetentionMarksTable {
  marked_at: Date;
  cursor_xid: string;
  cursor_id: number;
}

declare module '../storage/database.ts' {
  interface Database {
    outbox_retention: OutboxRetentionTable;
    outbox_retention_marks: OutboxRetentionMarksTable;
  }
}
