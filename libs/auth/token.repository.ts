import type { Selectable } from 'kysely';
import type { ApiTokensTable, Db } from '../storage/database.ts';

export type TokenRow = Selectable<ApiTokensTable>;

export async function insertToken(db: Db, row: Omit<TokenRow, 'revoked_at'>): Promise<TokenRow> {
  return db.insertInto('api_tokens').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findTokenByHash(db: Db, tokenHash: string): Promise<TokenRow | undefined> {
  return db
    .selectFrom('api_tokens')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export async function listTokens(db: Db): Promise<TokenRow[]> {
  return db.selectFrom('api_tokens').selectAll().orderBy('created_at').orderBy('id').execute();
}

/** Returns false when no live token has this id. */
export async function revokeToken(db: Db, id: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('api_tokens')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
