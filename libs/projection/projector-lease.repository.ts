import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../storage/database.ts';
import './projector-lease.tables.ts';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Takes or renews lease `name` for `holder` until `ttlMs` from the database's now: renewed
 * (same epoch) while `holder` still holds it, taken (epoch + 1) once it has expired or never
 * existed. Null when another holder's lease is still running.
 */
export async function takeLease(
  db: Db,
  name: string,
  holder: string,
  ttlMs: number,
): Promise<{ epoch: number } | null> {
  const result = await sql<{ epoch: string }>`
    insert into projector_leases (name, holder, epoch, expires_at)
    values (${name}, ${holder}, 1, now() + ${ttlMs} * interval '1 millisecond')
    on conflict (name) do update set
      epoch = case
        when projector_leases.holder = excluded.holder and projector_leases.expires_at > now()
        then projector_leases.epoch
        else projector_leases.epoch + 1
      end,
      holder = excluded.holder,
      expires_at = excluded.expires_at
    where projector_leases.holder = excluded.holder or projector_leases.expires_at <= now()
    returning epoch`.execute(db);
  const row = result.rows[0];
  return row ? { epoch: Number(row.epoch) } : null;
}

/**
 * True while `holder` holds lease `name` at `epoch` and it has not expired. Inside a
 * transaction the row stays share-locked until it ends, so no one can take the lease between
 * this check and the transaction's commit.
 */
export async function holdsLease(
  trx: Db,
  name: string,
  holder: string,
  epoch: number,
): Promise<boolean> {
  const result = await sql<{ held: boolean }>`
    select true as held from projector_leases
    where name = ${name} and holder = ${holder} and epoch = ${epoch} and expires_at > now()
    for share`.execute(trx);
  return result.rows.length > 0;
}

/** Gives the lease up at once (a graceful stop), so a standby need not wait for its expiry. */
export async function releaseLease(db: Db, name: string, holder: string): Promise<void> {
  await db
    .updateTable('projector_leases')
    .set({ expires_at: sql<Date>`now()` })
    .where('name', '=', name)
    .where('holder', '=', holder)
    .execute();
}
