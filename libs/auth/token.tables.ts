import type { Timestamp } from '../storage/database.ts';

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

declare module '../storage/database.ts' {
  interface Database {
    api_tokens: ApiTokensTable;
  }
}
