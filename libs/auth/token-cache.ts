import type { Postgres } from '../storage/postgres.ts';
import { TOKEN_CHANNEL, type TokenRow } from './token.repository.ts';

export interface TokenCacheOptions {
  /** Upper bound on how long an entry is trusted, should a revocation ever bypass the channel. */
  ttlMs: number;
  /** Bound on each of the two maps (live tokens, refused digests), so no flood grows memory. */
  maxEntries: number;
}

/** @defaultValue 60 s, 10,000 entries a map (about 2 MB for refused digests at most). */
export const DEFAULT_TOKEN_CACHE_OPTIONS: TokenCacheOptions = { ttlMs: 60_000, maxEntries: 10_000 };

type Entry<T> = { value: T; until: number };

/**
 * Token rows by hash, so an authenticated request costs no database round trip. A revoked
 * token must still be refused at once on every instance: each instance listens for
 * revocations and empties its cache on one, and caches nothing while it cannot hear them.
 *
 * Digests that are refused for good are kept apart: one that matched no token (a flood of
 * made-up tokens, a client with a stale one) and one of a revoked token. Both are safe to keep
 * whatever is announced: a secret is random, so one that matched nothing cannot match a token
 * issued later, and a revocation is never undone. Lookups of one digest already on their way
 * are shared, so a burst with one wrong token costs one round trip.
 */
export class TokenCache {
  private readonly live = new Map<string, Entry<TokenRow>>();
  /** A revoked token's row, or undefined for a digest no token has. */
  private readonly refused = new Map<string, Entry<TokenRow | undefined>>();
  private readonly loading = new Map<string, Promise<TokenRow | undefined>>();
  /**
   * Bumped by every revocation (or a moment of deafness): a lookup that began before it may
   * have read the row as it was before the revocation, and must not be cached.
   */
  private generation = 0;
  private receiving = false;

  private readonly options: TokenCacheOptions;

  constructor(options: TokenCacheOptions = DEFAULT_TOKEN_CACHE_OPTIONS) {
    this.options = options;
  }

  /**
   * The row for `hash` (revoked ones included), or undefined when no token has it: from the
   * cache, from a lookup of the same digest already on its way, or from `load`.
   */
  find(
    hash: string,
    now: number,
    load: (hash: string) => Promise<TokenRow | undefined>,
  ): Promise<TokenRow | undefined> {
    const live = fresh(this.live, hash, now);
    if (live) return Promise.resolve(live.value);
    const refused = fresh(this.refused, hash, now);
    if (refused) return Promise.resolve(refused.value);
    const pending = this.loading.get(hash);
    if (pending) return pending;
    const generation = this.generation;
    const loaded = load(hash)
      .then((row) => {
        if (generation === this.generation) this.remember(hash, row, now);
        return row;
      })
      .finally(() => {
        if (this.loading.get(hash) === loaded) this.loading.delete(hash);
      });
    this.loading.set(hash, loaded);
    return loaded;
  }

  private remember(hash: string, row: TokenRow | undefined, now: number): void {
    const until = now + this.options.ttlMs;
    if (row === undefined || row.revoked_at) {
      bounded(this.refused, this.options.maxEntries).set(hash, { value: row, until });
    } else if (this.receiving) {
      bounded(this.live, this.options.maxEntries).set(hash, { value: row, until });
    }
  }

  /** A revocation was announced (or may have been missed): forget every live token. */
  clear(): void {
    this.generation += 1;
    this.live.clear();
    this.loading.clear();
  }

  setReceiving(receiving: boolean): void {
    this.receiving = receiving;
    this.clear();
  }

  /** Live tokens held. */
  get size(): number {
    return this.live.size;
  }

  /** Refused digests held. */
  get refusedSize(): number {
    return this.refused.size;
  }
}

function fresh<T>(map: Map<string, Entry<T>>, hash: string, now: number): Entry<T> | undefined {
  const entry = map.get(hash);
  if (!entry) return undefined;
  if (entry.until > now) return entry;
  map.delete(hash);
  return undefined;
}

/** Makes room for one more entry: Maps iterate in insertion order, so the first is the oldest. */
function bounded<T>(map: Map<string, T>, maxEntries: number): Map<string, T> {
  while (map.size >= maxEntries) {
    const oldest = map.keys().next().value;
    if (oldest === undefined) break;
    map.delete(oldest);
  }
  return map;
}

/** A cache wired to the revocation channel of `postgres`; close it with the engines. */
export async function openTokenCache(
  postgres: Pick<Postgres, 'listen'>,
  options: TokenCacheOptions = DEFAULT_TOKEN_CACHE_OPTIONS,
): Promise<{ cache: TokenCache; close(): Promise<void> }> {
  const cache = new TokenCache(options);
  const listening = await postgres.listen(TOKEN_CHANNEL, {
    onNotify: () => cache.clear(),
    onState: (receiving) => cache.setReceiving(receiving),
  });
  return { cache, close: () => listening.close() };
}
