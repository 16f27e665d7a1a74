import type { Principal } from '../auth/principal.ts';
import {
  MemoryRateCounters,
  type RateCount,
  type RateCounterStore,
} from '../storage/rate-counter-store.ts';

/**
 * Budget classes. The master key is charged as a user token: it only manages tokens, and a
 * leaked one should not be able to hammer the server harder than any user.
 */
export type RateClass = 'anonymous' | 'user' | 'service_account' | 'embed';

/**
 * Requests per window, as the contract states; an embed token's own (`CAIRN_EMBED_RATE_LIMIT`).
 * @defaultValue 60 / 1000 / 5000 / 300
 */
export const DEFAULT_RATE_LIMITS: Readonly<Record<RateClass, number>> = {
  anonymous: 60,
  user: 1000,
  service_account: 5000,
  embed: 300,
};

/**
 * Who pays besides a principal: the holder of an embed token, known only by a digest of it so
 * that no counter key (in Redis) holds the token.
 */
export interface EmbedCaller {
  kind: 'embed';
  digest: string;
}
export type RateCaller = Principal | EmbedCaller;
export const RATE_WINDOW_SECONDS = 60;

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** When the window ends, in Unix seconds. */
  resetAt: number;
  /** Seconds until a refused caller may try again. */
  retryAfter: number;
}

export interface RateLimiter {
  readonly kind: 'redis' | 'memory';
  /**
   * Charges one request to the caller's budget, or `units` for one that counts as several (a
   * batch of queries); allowed while the count stays within the limit.
   */
  consume(
    principal: RateCaller | undefined,
    address: () => string,
    units?: number,
  ): Promise<RateDecision>;
  /** Gives back `units` a refused request was charged, so refusing it costs the caller nothing more. */
  refund(
    principal: RateCaller | undefined,
    address: () => string,
    units: number,
  ): Promise<RateDecision>;
  /** Reports the caller's budget without charging it (health probes, metrics scrapes). */
  peek(principal: RateCaller | undefined, address: () => string): Promise<RateDecision>;
  /** Drops the in-memory fallback counts; the store is closed by whoever opened it. */
  close(): Promise<void>;
}

export interface RateLimiterOptions {
  /**
   * Where budgets are counted: Redis (shared by every instance) or process memory. The limiter
   * neither opens nor closes it: it is a storage adapter, checked by readiness and closed on
   * shutdown with the other engines.
   */
  store: RateCounterStore;
  limits?: Partial<Record<RateClass, number>>;
}

/** Who pays for a request: a token pays for itself, everyone else by client address. */
export function rateSubject(
  principal: RateCaller | undefined,
  /** The caller's address, asked for only when the caller has no token. */
  address: () => string,
): { rateClass: RateClass; key: string } {
  if (principal?.kind === 'embed') return { rateClass: 'embed', key: `embed:${principal.digest}` };
  if (principal?.kind === 'token') {
    const rateClass = principal.tokenKind === 'service_account' ? 'service_account' : 'user';
    return { rateClass, key: `token:${principal.id}` };
  }
  if (principal?.kind === 'master') return { rateClass: 'user', key: 'master' };
  return { rateClass: 'anonymous', key: `ip:${address()}` };
}

/**
 * Charges requests to the store's counters. Each instance also counts every request in its own
 * memory, with the same budgets: when the Redis store fails or its circuit breaker is open,
 * that count decides, so the service keeps limiting through an outage (per instance: each one
 * grants up to the full budget) instead of letting everything through or refusing everyone;
 * since it has counted all along, a caller that spent its budget here is still refused. Redis
 * decides again as soon as it answers.
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const limits = { ...DEFAULT_RATE_LIMITS, ...options.limits };
  const { store } = options;
  const local = store instanceof MemoryRateCounters ? undefined : new MemoryRateCounters();
  const windowMs = RATE_WINDOW_SECONDS * 1000;

  const decide = async (
    principal: RateCaller | undefined,
    address: () => string,
    units: number,
  ): Promise<RateDecision> => {
    const { rateClass, key } = rateSubject(principal, address);
    const limit = limits[rateClass];
    const id = `${rateClass}:${key}`;
    let count: RateCount;
    if (local) {
      const fallback = local.countNow(id, windowMs, units);
      try {
        count = await store.count(id, windowMs, units);
      } catch {
        // Redis failed or its breaker is open (logged once, in metrics and /readyz).
        count = fallback;
      }
    } else {
      count = await store.count(id, windowMs, units);
    }
    return toDecision(units <= 0 || count.consumed <= limit, limit, count);
  };

  return {
    kind: store.kind,
    consume: (principal, address, units = 1) => decide(principal, address, units),
    refund: (principal, address, units) => decide(principal, address, -units),
    peek: (principal, address) => decide(principal, address, 0),
    async close() {
      await local?.close();
    },
  };
}

function toDecision(allowed: boolean, limit: number, count: RateCount): RateDecision {
  const msBeforeNext = Math.max(0, count.msBeforeReset);
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - count.consumed),
    resetAt: Math.ceil((Date.now() + msBeforeNext) / 1000),
    retryAfter: Math.max(1, Math.ceil(msBeforeNext / 1000)),
  };
}
