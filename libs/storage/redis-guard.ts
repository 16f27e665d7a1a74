import type { BreakerObserver } from './circuit-breaker.ts';

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
