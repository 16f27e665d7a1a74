import type { RedisGuard } from './redis-guard.ts';
import { RedisResultStore } from './redis-result-store.ts';
import { MemoryResultStore, type ResultStore } from './result-store.ts';

/** Redis when configured (one cache for every API instance), process memory otherwise. */
export async function openResultStore(options: {
  redisUrl: string | undefined;
  prefix: string;
  maxBytes: number;
  /** The circuit breaker's settings (the cache keeps its own, shorter, command time limit). */
  guard?: Omit<RedisGuard, 'commandTimeoutMs'>;
}): Promise<ResultStore> {
  if (!options.redisUrl) return new MemoryResultStore(options.maxBytes);
  const store = new RedisResultStore(
    options.redisUrl,
    options.prefix,
    options.maxBytes,
    options.guard,
  );
  return store.ready();
}
