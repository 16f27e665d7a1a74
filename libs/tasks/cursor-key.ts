import { createHmac, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../storage/database.ts';

const SECRET_NAME = 'cursor_key';

/**
 * The key that signs pagination cursors. Every api instance must use the same key, or a cursor
 * issued by one would be refused by the next: CAIRN_CURSOR_SECRET when set, else derived from
 * the master key (shared by construction), else a secret generated once and kept in Postgres.
 */
export async function resolveCursorKey(options: {
  configured: string | undefined;
  masterKey: string | undefined;
  db: Kysely<Database>;
}): Promise<Buffer> {
  const material = options.configured ?? options.masterKey ?? (await storedSecret(options.db));
  // A labelled derivation, so the cursor key never equals a credential someone could present.
  return createHmac('sha256', material).update('cairn:pagination-cursor:v1').digest();
}

async function storedSecret(db: Kysely<Database>): Promise<string> {
  // Racing instances both try to insert; the first wins and everyone reads the winner.
  await db
    .insertInto('server_secrets')
    .values({ name: SECRET_NAME, secret: randomBytes(32).toString('base64url') })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db
    .selectFrom('server_secrets')
    .select('secret')
    .where('name', '=', SECRET_NAME)
    .executeTakeFirstOrThrow();
  return row.secret;
}
