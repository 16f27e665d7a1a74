import { Redis } from 'ioredis';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import type { Principal } from '../auth/principal.ts';
import type { Logger } from '../observability/logger.ts';

/**
 * Budget classes. The master key is charged as a user token: it only manages tokens, and a
 * leaked one should not be able to hammer the server harder than any user.
 */
export type RateClass = 'anonymous' | 'user' | 'service_account';

/** Requests per window, as the contract states. @defaultValue 60 / 1000 / 5000 */
export const DEFAULT_RATE_LIMITS: Readonly<Record<RateClass, number>> = {
  anonymous: 60,
  user: 1000,
  service_account: 5000,
};
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
  /** Charges one request to the caller's budget. */
  consume(principal: Principal | undefined, ip: string): Promise<RateDecision>;
  /** Reports the caller's budget without charging it (health probes, metrics scrapes). */
  peek(principal: Principal | undefined, ip: string): Promise<RateDecision>;
  close(): Promise<void>;
}

export interface RateLimiterOptions {
  /** Shared counters across instances; without it each process counts alone. */
  redisUrl?: string | undefined;
  /** Redis key prefix (config.redisPrefix). */
  prefix: string;
  limits?: Partial<Record<RateClass, number>>;
  logger?: Logger;
}

/** Who pays for a request: a token pays for itself, everyone else by client address. */
export function rateSubject(
  principal: Principal | undefined,
  ip: string,
): { rateClass: RateClass; key: string } {
  if (principal?.kind === 'token') {
    const rateClass = principal.tokenKind === 'service_account' ? 'service_account' : 'user';
    return { rateClass, key: `token:${principal.id}` };
  }
  if (principal?.kind === 'master') return { rateClass: 'user', key: 'master' };
  return { rateClass: 'anonymous', key: `ip:${ip}` };
}

/**
 * Waits (briefly) for Redis to be ready, so the first requests are counted where every
 * instance sees them; a Redis that is down at start-up leaves the insurance limiter in charge.
 */
export async function createRateLimiter(options: RateLimiterOptions): Promise<RateLimiter> {
  const limits = { ...DEFAULT_RATE_LIMITS, ...options.limits };
  const redis = options.redisUrl ? connect(options.redisUrl, options.logger) : undefined;
  if (redis) await ready(redis, 2_000);
  const limiters = {} as Record<RateClass, RateLimiterAbstract>;
  for (const rateClass of Object.keys(limits) as RateClass[]) {
    const base = {
      points: limits[rateClass],
      duration: RATE_WINDOW_SECONDS,
      keyPrefix: `${options.prefix}:ratelimit:${rateClass}`,
    };
    // The insurance limiter answers while Redis is unreachable: each instance then counts
    // alone (a looser limit for the outage), and Redis takes over again once it is back.
    limiters[rateClass] = redis
      ? new RateLimiterRedis({
          ...base,
          storeClient: redis,
          rejectIfRedisNotReady: true,
          insuranceLimiter: new RateLimiterMemory(base),
        })
      : new RateLimiterMemory(base);
  }

  const decide = async (
    principal: Principal | undefined,
    ip: string,
    charge: boolean,
  ): Promise<RateDecision> => {
    const { rateClass, key } = rateSubject(principal, ip);
    const limiter = limiters[rateClass];
    const limit = limits[rateClass];
    try {
      const res = charge ? await limiter.consume(key) : await limiter.get(key);
      return toDecision(true, limit, res);
    } catch (error) {
      if (error instanceof RateLimiterRes) return toDecision(false, limit, error);
      // Both stores failed: serving unmetered beats refusing everyone.
      options.logger?.warn({ err: error }, 'rate limiter unavailable; request not metered');
      return toDecision(true, limit, null);
    }
  };

  return {
    kind: redis ? 'redis' : 'memory',
    consume: (principal, ip) => decide(principal, ip, true),
    peek: (principal, ip) => decide(principal, ip, false),
    async close() {
      redis?.disconnect();
    },
  };
}

function toDecision(allowed: boolean, limit: number, res: RateLimiterRes | null): RateDecision {
  const msBeforeNext = res ? Math.max(0, res.msBeforeNext) : RATE_WINDOW_SECONDS * 1000;
  return {
    allowed,
    limit,
    remaining: res ? Math.max(0, limit - res.consumedPoints) : limit,
    resetAt: Math.ceil((Date.now() + msBeforeNext) / 1000),
    retryAfter: Math.max(1, Math.ceil(msBeforeNext / 1000)),
  };
}

function connect(url: string, logger: Logger | undefined): Redis {
  const redis = new Redis(url, {
    // Fail fast instead of queueing while disconnected, so the insurance limiter answers at
    // once; a hung server is cut off by the command timeout. ioredis keeps reconnecting.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 500,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
  });
  let healthy = true;
  redis.on('error', (error) => {
    if (healthy) logger?.warn({ err: error }, 'rate limits: Redis unreachable, counting in memory');
    healthy = false;
  });
  redis.on('ready', () => {
    if (!healthy) logger?.info('rate limits: Redis is back');
    healthy = true;
  });
  return redis;
}

async function ready(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, timeoutMs);
    function done() {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    }
    redis.on('ready', done);
  });
}
