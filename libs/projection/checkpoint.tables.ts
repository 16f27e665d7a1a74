import type { ColumnType } from 'kysely';
import type { Timestamp } from '../storage/database.ts';

/** Where each projector has got to in the outbox, and the batch it has fixed but not finished. */
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

declare module '../storage/database.ts' {
  interface Database {
    projector_checkpoints: ProjectorCheckpointsTable;
  }
}
