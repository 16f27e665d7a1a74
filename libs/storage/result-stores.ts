import { RedisResultStore } from './redis-result-store.ts';
import { MemoryResultStore, type ResultStore } from './result-store.ts';

/** Redis when configured (one cache for every API instance), process memory otherwise. */
export async function openResultStore(options: {
  redisUrl: string | undefined;
  prefix: string;
  maxBytes: number;
}): Promise<ResultStore> {
  if (!options.redisUrl) return new MemoryResultStore(options.maxBytes);
  return new RedisResultStore(options.redisUrl, options.prefix, options.maxBytes).ready();
}
