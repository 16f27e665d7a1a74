import { MemoryRateCounters, type RateCounterStore } from './rate-counter-store.ts';
import type { RedisGuard } from './redis-guard.ts';
import { RedisRateCounters } from './redis-rate-counter-store.ts';

/** Redis when configured (one budget across every API instance), process memory otherwise. */
export async function openRateCounterStore(options: {
  redisUrl: string | undefined;
  prefix: string;
  guard: RedisGuard;
}): Promise<RateCounterStore> {
  if (!options.redisUrl) return new MemoryRateCounters();
  return new RedisRateCounters(options.redisUrl, options.prefix, options.guard).ready();
}
