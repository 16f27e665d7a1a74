import type { Postgres } from '../storage/postgres.ts';
import type { TokenRow } from './token.repository.ts';

/** Where revocations are announced; `revokeToken` notifies it in the revoking transaction. */
export const TOKEN_CHANNEL = 'cairn_token_revoked';

export interface TokenCacheOptions {
  /** Upper bound on how long a row is trusted, should a revocation ever bypass the channel. */
  ttlMs: number;
  maxEntries: number;
}

/**
 * Token rows by hash, so an authenticated request costs no database round trip. A revoked
 * token must still be refused at once on every instance: each instance listens for
 * revocations and empties its cache on one, and caches nothing while it cannot hear them.
 * Only known tokens are kept, so unknown secrets cannot flood it; expiry is checked on every
 * request against the cached row.
 */
export class TokenCache {
  private readonly rows = new Map<string, { row: TokenRow; until: number }>();
  private receiving = false;

  constructor(private readonly options: TokenCacheOptions) {}

  get(hash: string, now: number): TokenRow | undefined {
    const hit = this.rows.get(hash);
    if (!hit) return undefined;
    if (hit.until > now) return hit.row;
    this.rows.delete(hash);
    return undefined;
  }

  set(hash: string, row: TokenRow, now: number): void {
    if (!this.receiving || row.revoked_at) return;
    if (this.rows.size >= this.options.maxEntries) {
      // Maps iterate in insertion order: the first key is the oldest entry.
      const oldest = this.rows.keys().next().value;
      if (oldest !== undefined) this.rows.delete(oldest);
    }
    this.rows.set(hash, { row, until: now + this.options.ttlMs });
  }

  /** A revocation was announced (or may have been missed): forget everything. */
  clear(): void {
    this.rows.clear();
  }

  setReceiving(receiving: boolean): void {
    this.receiving = receiving;
    this.rows.clear();
  }

  get size(): number {
    return this.rows.size;
  }
}

/** A cache wired to the revocation channel of `postgres`; close it with the engines. */
export async function openTokenCache(
  postgres: Pick<Postgres, 'listen'>,
  options: TokenCacheOptions = { ttlMs: 60_000, maxEntries: 10_000 },
): Promise<{ cache: TokenCache; close(): Promise<void> }> {
  const cache = new TokenCache(options);
  const listening = await postgres.listen(TOKEN_CHANNEL, {
    onNotify: () => cache.clear(),
    onState: (receiving) => cache.setReceiving(receiving),
  });
  return { cache, close: () => listening.close() };
}
