import type { Kysely } from 'kysely';
import type { Database, Db } from '../storage/database.ts';
import type { Principal, Scope, TokenKind } from './principal.ts';
import { findTokenByHash, insertToken, type TokenRow } from './token.repository.ts';
import type { TokenCache } from './token-cache.ts';
import { digestsEqual, generateToken, generateTokenId, hashSecret } from './token-secret.ts';

export interface NewTokenInput {
  name: string;
  scopes: Scope[];
  businesses: string[];
  kind?: TokenKind;
  expires_in_days?: number;
}

export interface IssuedToken {
  id: string;
  token: string;
  name: string;
  scopes: string[];
  businesses: string[];
  kind: TokenKind;
  expires_at: string | null;
}

const DAY_MS = 86_400_000;

/** Creates a token; the secret is returned here and never again (only its hash is kept). */
export async function issueToken(db: Db, input: NewTokenInput, now: Date): Promise<IssuedToken> {
  const token = generateToken();
  const row = await insertToken(db, {
    id: generateTokenId(),
    name: input.name,
    token_hash: hashSecret(token),
    kind: input.kind ?? 'user',
    scopes: [...new Set(input.scopes)],
    businesses: [...new Set(input.businesses)],
    created_at: now,
    expires_at: input.expires_in_days
      ? new Date(now.getTime() + input.expires_in_days * DAY_MS)
      : null,
  });
  return { ...toTokenView(row), token };
}

export function toTokenView(row: TokenRow): Omit<IssuedToken, 'token'> {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    businesses: row.businesses,
    kind: row.kind,
    expires_at: row.expires_at ? row.expires_at.toISOString() : null,
  };
}

/** A token as the master key's listing shows it: never the secret, always its state. */
export function toListedToken(row: TokenRow, now: Date) {
  const expired = row.expires_at !== null && row.expires_at.getTime() <= now.getTime();
  return {
    ...toTokenView(row),
    created_at: row.created_at.toISOString(),
    revoked_at: row.revoked_at ? row.revoked_at.toISOString() : null,
    state: row.revoked_at ? 'revoked' : expired ? 'expired' : 'active',
  };
}

const masterDigests = new Map<string, string>();
/** The master keys are the same for the life of the process: digest each once. */
function masterDigest(key: string): string {
  let digest = masterDigests.get(key);
  if (digest === undefined) {
    // A process sees one or two keys (two during a rotation); a test run sees a few dozen.
    if (masterDigests.size >= 64) masterDigests.clear();
    digest = hashSecret(key);
    masterDigests.set(key, digest);
  }
  return digest;
}

/**
 * Turns an Authorization header into a principal. A revoked token stops working at once on
 * every instance: the cache (when given) is emptied by each revocation (see token-cache.ts).
 */
export async function authenticate(
  db: Kysely<Database>,
  header: string | undefined,
  /** The master key, or during a rotation the new and the previous one: each is accepted. */
  masterKey: string | readonly string[] | undefined,
  now: Date,
  cache?: TokenCache,
): Promise<Principal> {
  if (header === undefined || header.trim() === '') return { kind: 'anonymous' };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1])
    return { kind: 'invalid', reason: 'The Authorization header must be "Bearer <token>".' };
  // One digest serves both the master key comparison and the token look-up.
  const hash = hashSecret(match[1]);
  const masterKeys =
    masterKey === undefined ? [] : typeof masterKey === 'string' ? [masterKey] : masterKey;
  if (masterKeys.some((key) => key && digestsEqual(hash, masterDigest(key))))
    return { kind: 'master' };
  // A digest refused a moment ago (unknown or revoked) is refused again without a round trip.
  const row = cache
    ? await cache.find(hash, now.getTime(), (digest) => findTokenByHash(db, digest))
    : await findTokenByHash(db, hash);
  if (!row && !masterKeys.some(Boolean)) {
    // Most likely someone trying a master key on a server that was not given one.
    return {
      kind: 'invalid',
      reason:
        'The token is not recognised, and this server has no master key (CAIRN_MASTER_KEY is unset), so the token endpoints accept nothing: issue tokens with `npm run cli -- tokens create`, or set CAIRN_MASTER_KEY and restart.',
    };
  }
  if (!row) return { kind: 'invalid', reason: 'The token is not recognised.' };
  if (row.revoked_at) return { kind: 'invalid', reason: 'The token has been revoked.' };
  if (row.expires_at && row.expires_at.getTime() <= now.getTime()) {
    return { kind: 'invalid', reason: 'The token has expired.' };
  }
  return {
    kind: 'token',
    id: row.id,
    tokenKind: row.kind,
    scopes: row.scopes as Scope[],
    businesses: row.businesses,
  };
}
