import { createHmac, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../storage/database.ts';

const SECRET_NAME = 'cursor_key';

/** The key new cursors are sealed with, and those that still open cursors sealed before a rotation. */
export interface CursorKeys {
  current: Buffer;
  previous: Buffer[];
}

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
  return deriveCursorKey(
    options.configured ?? options.masterKey ?? (await storedSecret(options.db)),
  );
}

/**
 * The current key (as `resolveCursorKey`) and, during a rotation, the keys of the secrets being
 * rotated out: CAIRN_CURSOR_SECRET_PREVIOUS, and CAIRN_MASTER_KEY_PREVIOUS while the cursor key
 * derives from the master key. A cursor lives for one walk through a listing, so once every
 * instance runs with the new secret the previous one can go.
 */
export async function resolveCursorKeys(options: {
  configured: string | undefined;
  configuredPrevious: string | undefined;
  masterKey: string | undefined;
  masterKeyPrevious: string | undefined;
  db: Kysely<Database>;
}): Promise<CursorKeys> {
  const current = await resolveCursorKey(options);
  const previous = [
    options.configuredPrevious,
    options.configured === undefined ? options.masterKeyPrevious : undefined,
  ]
    .filter((material): material is string => material !== undefined)
    .map(deriveCursorKey)
    .filter((key, at, keys) => !key.equals(current) && keys.findIndex((k) => k.equals(key)) === at);
  return { current, previous };
}

function deriveCursorKey(material: string): Buffer {
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
