import type { ColumnType } from 'kysely';
import type { Timestamp } from '../storage/database.ts';

/** What each committed batch changed, per business (see 0015_projection_changes.sql). */
export interface ProjectionChangesTable {
  seq: ColumnType<number, never, never>;
  /** Null: every business, from the beginning of time. */
  business: string | null;
  earliest: Date | null;
  latest: Date | null;
  /** Set: the row stands for this erasure, a change to the business it names alone. */
  erasure: ColumnType<string | null, string | null | undefined, string | null>;
  /** The live checkpoint's cursor once the change was made. */
  cursor_xid: string | null;
  cursor_id: number | null;
  logged_at: Timestamp;
}

declare module '../storage/database.ts' {
  interface Database {
    projection_changes: ProjectionChangesTable;
  }
}
