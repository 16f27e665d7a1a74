import type { Selectable } from 'kysely';
import type { Db, IdempotencyKeysTable } from './database.ts';

type KeyRow = Selectable<IdempotencyKeysTable>;

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
