import type { ColumnType } from 'kysely';
import type { Timestamp } from '../storage/database.ts';

/** A saved query (0019_views.sql). */
export interface ViewsTable {
  id: string;
  name: string;
  /** The query as `POST /api/v1/query` takes it, checked and with its defaults filled in. */
  query: ColumnType<Record<string, unknown>, string, string>;
  /** What the view reads: only a token that can read every one of them sees it. */
  businesses: string[];
  prometheus: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** An embed token of a view, kept only as its hash. */
export interface ViewEmbedsTable {
  id: string;
  view_id: string;
  token_hash: string;
  locked_filters: ColumnType<unknown[], string, string>;
  allowed_origins: string[];
  created_at: Timestamp;
  expires_at: Date;
  revoked_at: Date | null;
}

declare module '../storage/database.ts' {
  interface Database {
    views: ViewsTable;
    view_embeds: ViewEmbedsTable;
  }
}
