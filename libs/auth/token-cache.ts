import type { Postgres } from '../storage/postgres.ts';
import { TOKEN_CHANNEL, type TokenRow } from './token.repository.ts';

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
  /**
   * Digests no token has: a caller repeating a wrong secret (a flood, or a client with a stale
   * token) is refused without a database round trip. Safe to keep even across revocations:
   * a secret is random, so one that matched nothing cannot match a token issued later.
   */
  private readonly unknown = new Map<string, number>();
  private receiving = false;

  private readonly options: TokenCacheOptions;

  constructor(options: TokenCacheOptions) {
    this.options = options;
  }

  isUnknown(hash: string, now: number): boolean {
    const until = this.unknown.get(hash);
    if (until === undefined) return false;
    if (until > now) return true;
    this.unknown.delete(hash);
    return false;
  }

  setUnknown(hash: string, now: number): void {
    if (this.unknown.size >= this.options.maxEntries) {
      const oldest = this.unknown.keys().next().value;
      if (oldest !== undefined) this.unknown.delete(oldest);
    }
    this.unknown.set(hash, now + this.options.ttlMs);
  }

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
