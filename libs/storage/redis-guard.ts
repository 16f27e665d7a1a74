import { Redis, type RedisOptions } from 'ioredis';
import type { BreakerObserver, CircuitBreaker } from './circuit-breaker.ts';

/**
 * How a Redis store on the request path protects itself from a hung server: each command's
 * time limit and the circuit breaker's settings (config.redisLimits), and who hears of it.
 */
export interface RedisGuard {
  readonly commandTimeoutMs: number;
  readonly breakerFailures: number;
  readonly breakerCoolDownMs: number;
  readonly observer?: BreakerObserver | undefined;
}

/**
 * A Redis client for a store behind `breaker`: it fails at once instead of queueing while
 * disconnected (a hung server is cut off by a time limit, and ioredis keeps reconnecting on its
 * own), its failures surface only as rejected commands, and a reconnect closes the breaker at once.
 */
export function guardedRedis(
  url: string,
  breaker: CircuitBreaker,
  options: RedisOptions = {},
): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
    ...options,
  });
  redis.on('error', () => {});
  redis.on('ready', () => breaker.recovered());
  return redis;
}

/** Waits up to `timeoutMs` for the connection, so the first requests after start-up can use it. */
export async function redisReady(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    redis.on('ready', done);
  });
}
