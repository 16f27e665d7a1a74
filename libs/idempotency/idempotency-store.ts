import { type ColumnType, type Selectable, sql } from 'kysely';
import type { Db, IdempotencyKeysTable } from '../storage/database.ts';

type KeyRow = Selectable<IdempotencyKeysTable>;

/** Per principal, the read answers and bytes ever stored (0011_idempotency_read_bound.sql). */
export interface IdempotencyReadUsageTable {
  principal: string;
  answers: number;
  bytes: number;
}

declare module '../storage/database.ts' {
  interface IdempotencyKeysTable {
    /** A read answer's place among its principal's stored answers; null for writes and claims. */
    read_seq: ColumnType<number | null, never, never>;
    /** Bytes of answers its principal stored before this one. */
    read_offset: ColumnType<number | null, never, never>;
  }
  interface Database {
    idempotency_read_usage: IdempotencyReadUsageTable;
  }
}

export interface KeyRef {
  principal: string;
  key: string;
  claimId: string;
}

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  /** JSON text (possibly sealed), or null for an empty body. */
  body: string | null;
}

export type ClaimOutcome =
  | { kind: 'claimed' }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'mismatch' }
  | { kind: 'in_progress' };

export interface ClaimRequest extends KeyRef {
  fingerprint: string;
  now: Date;
  ttlMs: number;
  /** An in-progress claim older than this is taken over (its request is presumed dead). */
  leaseMs: number;
}

/**
 * Claims a key in its own statement (not inside the caller's transaction), so a concurrent
 * duplicate sees the claim at once and is told 409 instead of waiting on a row lock.
 */
export async function claimKey(db: Db, request: ClaimRequest): Promise<ClaimOutcome> {
  const { principal, key, claimId, now } = request;
  const expiresAt = new Date(now.getTime() + request.ttlMs);
  // A few rounds at most: each lost race means another request changed the row meanwhile.
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const inserted = await db
      .insertInto('idempotency_keys')
      .values({
        principal,
        key,
        fingerprint: request.fingerprint,
        claim_id: claimId,
        status: 'in_progress',
        response_status: null,
        response_headers: null,
        response_body: null,
        created_at: now,
        expires_at: expiresAt,
      })
      .onConflict((oc) => oc.columns(['principal', 'key']).doNothing())
      .returning('claim_id')
      .executeTakeFirst();
    if (inserted) return { kind: 'claimed' };

    const row = await db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('principal', '=', principal)
      .where('key', '=', key)
      .executeTakeFirst();
    if (!row) continue;
    if (row.expires_at.getTime() <= now.getTime()) {
      // Expired keys are purged lazily here, and in bulk by purgeExpiredKeys.
      await deleteClaim(db, { principal, key, claimId: row.claim_id });
      continue;
    }
    if (row.fingerprint !== request.fingerprint) return { kind: 'mismatch' };
    if (row.status === 'completed') return { kind: 'replay', response: toStored(row) };
    if (row.created_at.getTime() + request.leaseMs > now.getTime()) return { kind: 'in_progress' };
    const taken = await db
      .updateTable('idempotency_keys')
      .set({ claim_id: claimId, created_at: now, expires_at: expiresAt })
      .where('principal', '=', principal)
      .where('key', '=', key)
      .where('claim_id', '=', row.claim_id)
      .where('status', '=', 'in_progress')
      .executeTakeFirst();
    if (Number(taken.numUpdatedRows) > 0) return { kind: 'claimed' };
  }
  return { kind: 'in_progress' };
}

/**
 * Stores the response under this claim. Called with the write's own transaction, so the write
 * and its record commit together; false when the claim is no longer ours (taken over).
 */
export async function completeClaim(
  db: Db,
  ref: KeyRef,
  response: StoredResponse,
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({
      status: 'completed',
      response_status: response.status,
      response_headers: JSON.stringify(response.headers),
      response_body: response.body,
    })
    .where('principal', '=', ref.principal)
    .where('key', '=', ref.key)
    .where('claim_id', '=', ref.claimId)
    .where('status', '=', 'in_progress')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** How many read answers (and bytes of them) one principal keeps for replay. */
export interface ReadAnswerBound {
  maxKeys: number;
  maxBytes: number;
}

/**
 * At most this many of a principal's oldest read answers go per stored answer: one is the
 * usual case, and a bound lowered by configuration is reached again within a few requests
 * without one statement deleting thousands of rows.
 */
const EVICTED_AT_ONCE = 64;

/**
 * Stores a read's answer under this claim (`bytes` is what it weighs), then evicts the
 * principal's oldest read answers beyond `bound` (see sql/postgres/0011_idempotency_read_bound.sql).
 * Storing bumps the principal's running count of answers and bytes, and the answer takes its
 * place in that count; evicting removes the answers that fell out of the last `maxKeys`
 * answers or the last `maxBytes` bytes. Eviction is a statement of its own so that it sees
 * every answer stored before it, those of concurrent requests included: once the principal's
 * requests settle, it keeps no more than the bound. Only completed read answers are ever
 * evicted; claims still running and write records are not.
 */
export async function completeReadClaim(
  db: Db,
  ref: KeyRef,
  response: StoredResponse,
  bytes: number,
  bound: ReadAnswerBound,
): Promise<{ stored: boolean; evicted: number }> {
  const { rows } = await sql<{ answers: string; bytes: string; stored: boolean }>`
    with counted as (
      insert into idempotency_read_usage as u (principal, answers, bytes)
      values (${ref.principal}, 1, ${bytes})
      on conflict (principal) do update
        set answers = u.answers + 1, bytes = u.bytes + excluded.bytes
      returning u.answers, u.bytes
    ), stored as (
      update idempotency_keys k
      set status = 'completed',
        response_status = ${response.status},
        response_headers = ${JSON.stringify(response.headers)},
        response_body = ${response.body},
        read_seq = counted.answers,
        read_offset = counted.bytes - ${bytes}
      from counted
      where k.principal = ${ref.principal} and k.key = ${ref.key}
        and k.claim_id = ${ref.claimId} and k.status = 'in_progress'
      returning k.key
    )
    select counted.answers::text as answers, counted.bytes::text as bytes,
      exists (select 1 from stored) as stored
    from counted
  `.execute(db);
  const counted = rows[0];
  if (!counted) return { stored: false, evicted: 0 };
  const evicted = await sql`
    delete from idempotency_keys k
    using (
      select key, read_seq from idempotency_keys
      where principal = ${ref.principal} and read_seq is not null
      order by read_seq
      limit ${EVICTED_AT_ONCE}
    ) oldest
    where k.principal = ${ref.principal} and k.key = oldest.key
      and k.read_seq = oldest.read_seq and k.status = 'completed'
      and (k.read_seq <= ${counted.answers}::bigint - ${bound.maxKeys}
        or k.read_offset < ${counted.bytes}::bigint - ${bound.maxBytes})
  `.execute(db);
  return { stored: counted.stored, evicted: Number(evicted.numAffectedRows ?? 0) };
}

/** Gives a key back after a failed request, so the caller can retry with it. */
export async function releaseClaim(db: Db, ref: KeyRef): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('principal', '=', ref.principal)
    .where('key', '=', ref.key)
    .where('claim_id', '=', ref.claimId)
    .where('status', '=', 'in_progress')
    .execute();
}

export async function purgeExpiredKeys(db: Db, now: Date): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('expires_at', '<=', now)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

async function deleteClaim(db: Db, ref: KeyRef): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('principal', '=', ref.principal)
    .where('key', '=', ref.key)
    .where('claim_id', '=', ref.claimId)
    .execute();
}

function toStored(row: KeyRow): StoredResponse {
  return {
    status: row.response_status ?? 200,
    headers: row.response_headers ? JSON.parse(row.response_headers) : {},
    body: row.response_body,
  };
}
