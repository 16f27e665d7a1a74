import { type Selectable, sql } from 'kysely';
import type { Db } from '../storage/database.ts';
import type { ApiTokensTable } from './token.tables.ts';

/** Where revocations are announced; `revokeToken` notifies it in the revoking transaction. */
export const TOKEN_CHANNEL = 'cairn_token_revoked';

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

/** One page of tokens, oldest first, with the count of all of them. */
export async function listTokenPage(
  db: Db,
  page: { limit: number; offset: number },
): Promise<{ rows: TokenRow[]; total: number }> {
  const { total } = await db
    .selectFrom('api_tokens')
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .executeTakeFirstOrThrow();
  const rows = await db
    .selectFrom('api_tokens')
    .selectAll()
    .orderBy('created_at')
    .orderBy('id')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  return { rows, total: Number(total) };
}

export async function findTokenById(db: Db, id: string): Promise<TokenRow | undefined> {
  return db.selectFrom('api_tokens').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Returns false when no live token has this id. The revocation is announced on
 * TOKEN_CHANNEL by the same statement, so every instance hears of it when, and only if, it
 * commits.
 */
export async function revokeToken(db: Db, id: string, now: Date): Promise<boolean> {
  const result = await db
    .with('revoked', (qb) =>
      qb
        .updateTable('api_tokens')
        .set({ revoked_at: now })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .returning('id'),
    )
    .selectFrom('revoked')
    .select(sql<string>`pg_notify(${TOKEN_CHANNEL}, revoked.id)`.as('notified'))
    .execute();
  return result.length > 0;
}
