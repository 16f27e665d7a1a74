import type { Redis } from 'ioredis';
import { CircuitBreaker } from './circuit-breaker.ts';
import type { RateCount, RateCounterStore } from './rate-counter-store.ts';
import { guardedRedis, type RedisGuard, redisReady } from './redis-guard.ts';

/**
 * Charges ARGV[2] units (0: only reads) to one key's count, starting its window on the first
 * charge; a negative charge gives units back within a window that still runs, never below 0.
 * KEYS: counter. ARGV: window in ms, units. Returns {consumed, ms before the window ends}.
 */
const COUNT_SCRIPT = `
local window = tonumber(ARGV[1])
local units = tonumber(ARGV[2])
local consumed
if units > 0 then
  consumed = redis.call('INCRBY', KEYS[1], units)
else
  consumed = tonumber(redis.call('GET', KEYS[1]) or '0')
  if consumed == 0 then return {0, window} end
  if units < 0 then
    consumed = math.max(0, consumed + units)
    redis.call('SET', KEYS[1], consumed, 'KEEPTTL')
  end
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], window)
  ttl = window
end
return {consumed, ttl}`;

type ScriptedRedis = Redis & {
  rateCount(key: string, windowMs: number, units: number): Promise<[number, number]>;
};

/**
 * Rate-limit counters in Redis, shared by every API instance. Every command goes through a
 * circuit breaker: a hung Redis costs the first few requests the command timeout, then
 * `count` fails at once (`BreakerOpenError`) until a trial call finds Redis answering again.
 * The caller decides what to count with meanwhile.
 */
export class RedisRateCounters implements RateCounterStore {
  readonly kind = 'redis';
  readonly breaker: CircuitBreaker;
  private readonly redis: ScriptedRedis;
  private readonly prefix: string;

  constructor(url: string, prefix: string, guard: RedisGuard) {
    this.prefix = `${prefix}:ratelimit:`;
    this.breaker = new CircuitBreaker({
      name: 'redis_rate_limits',
      whileOpen: 'rate limits counted in this process (same budgets, per instance)',
      timeoutMs: guard.commandTimeoutMs,
      failureThreshold: guard.breakerFailures,
      coolDownMs: guard.breakerCoolDownMs,
      observer: guard.observer,
    });
    // A hung server is cut off by the breaker's time limit.
    this.redis = guardedRedis(url, this.breaker) as ScriptedRedis;
    this.redis.defineCommand('rateCount', { numberOfKeys: 1, lua: COUNT_SCRIPT });
  }

  /** Waits briefly for the connection, so the first requests are counted where all instances see them. */
  async ready(timeoutMs = 2_000): Promise<this> {
    await redisReady(this.redis, timeoutMs);
    return this;
  }

  async count(key: string, windowMs: number, units: number): Promise<RateCount> {
    const [consumed, msBeforeReset] = await this.breaker.run(() =>
      this.redis.rateCount(`${this.prefix}${key}`, windowMs, units),
    );
    return { consumed, msBeforeReset };
  }

  /** A ping through the breaker: while it is open, `degraded` without asking Redis. */
  async check(): Promise<'ok' | 'degraded'> {
    try {
      await this.breaker.run(() => this.redis.ping());
      return 'ok';
    } catch {
      return 'degraded';
    }
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
