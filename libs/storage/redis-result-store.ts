import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { CircuitBreaker } from './circuit-breaker.ts';
import { guardedRedis, type RedisGuard, redisReady } from './redis-guard.ts';
import { ANY_TAG, MAX_ENTRY_SHARE, type ResultStore } from './result-store.ts';

/** A tag as Redis keys name it: of a fixed length, and not the business's name. */
const tagId = (tag: string): string => createHash('sha256').update(tag).digest('base64url');

/** A cache that does not answer this promptly is a miss: the engine answers instead. */
const CACHE_COMMAND_TIMEOUT_MS = 250;

/**
 * Takes an entry out of the sets of the tags it was stored with. Entry `id`'s tags are the set
 * `<base>g:<id>`; a tag's entries, the set `<base>t:<tag>`.
 */
const UNLINK = `
local function unlink(base, id)
  local tags = base .. 'g:' .. id
  for _, tag in ipairs(redis.call('SMEMBERS', tags)) do redis.call('SREM', base .. 't:' .. tag, id) end
  redis.call('DEL', tags)
end`;

/**
 * Writes an entry with its tags, accounts its bytes and evicts least recently used entries
 * until the total is within the bound, in one step so concurrent instances cannot push the
 * total past it together. KEYS: entry, recency set, byte total, sequence. ARGV: id, value,
 * bound, entry key prefix, tag key prefix, tags…
 */
const SET_SCRIPT = `${UNLINK}
unlink(ARGV[5], ARGV[1])
local previous = redis.call('STRLEN', KEYS[1])
redis.call('SET', KEYS[1], ARGV[2])
local total = redis.call('INCRBY', KEYS[3], string.len(ARGV[2]) - previous)
redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[4]), ARGV[1])
for i = 6, #ARGV do
  redis.call('SADD', ARGV[5] .. 'g:' .. ARGV[1], ARGV[i])
  redis.call('SADD', ARGV[5] .. 't:' .. ARGV[i], ARGV[1])
end
local evicted = 0
while total > tonumber(ARGV[3]) do
  local oldest = redis.call('ZPOPMIN', KEYS[2])
  if #oldest == 0 then break end
  local key = ARGV[4] .. oldest[1]
  total = redis.call('DECRBY', KEYS[3], redis.call('STRLEN', key))
  redis.call('DEL', key)
  unlink(ARGV[5], oldest[1])
  evicted = evicted + 1
end
return evicted`;

/** Reads an entry and marks it most recently used. KEYS: entry, recency set, sequence. ARGV: id. */
const GET_SCRIPT = `
local value = redis.call('GET', KEYS[1])
if value then redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), ARGV[1]) end
return value`;

/**
 * Deletes every entry stored with one of the tags. KEYS: recency set, byte total. ARGV: entry
 * key prefix, tag key prefix, tags…
 */
const FORGET_SCRIPT = `${UNLINK}
local forgotten = 0
for i = 3, #ARGV do
  local entries = ARGV[2] .. 't:' .. ARGV[i]
  for _, id in ipairs(redis.call('SMEMBERS', entries)) do
    local key = ARGV[1] .. id
    redis.call('DECRBY', KEYS[2], redis.call('STRLEN', key))
    forgotten = forgotten + redis.call('DEL', key)
    redis.call('ZREM', KEYS[1], id)
    unlink(ARGV[2], id)
  end
  redis.call('DEL', entries)
end
return forgotten`;

/**
 * Deletes every entry and resets the accounting. KEYS: recency set, byte total. ARGV: entry key
 * prefix, tag key prefix.
 */
const CLEAR_SCRIPT = `${UNLINK}
local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
for _, id in ipairs(ids) do
  redis.call('DEL', ARGV[1] .. id)
  unlink(ARGV[2], id)
end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], 0)
return #ids`;

type ScriptedRedis = Redis & {
  resultClear(...args: string[]): Promise<number>;
  resultForget(...args: string[]): Promise<number>;
  resultSet(...args: Array<string | number>): Promise<number>;
  resultGet(...args: string[]): Promise<string | null>;
};

/**
 * The result cache in Redis, shared by every API instance, bounded in bytes by Cairn's own
 * accounting (Redis's maxmemory policy is the server's business). Commands fail fast rather
 * than queue: a cache that does not answer promptly is a miss, and after a few in a row its
 * circuit breaker skips Redis altogether until a trial call finds it answering.
 */
export class RedisResultStore implements ResultStore {
  readonly kind = 'redis';
  private readonly redis: ScriptedRedis;
  private readonly keys: {
    entry: string;
    tag: string;
    recency: string;
    bytes: string;
    sequence: string;
  };

  private readonly maxBytes: number;
  readonly breaker: CircuitBreaker;

  constructor(
    url: string,
    prefix: string,
    maxBytes: number,
    guard: Omit<RedisGuard, 'commandTimeoutMs'> = { breakerFailures: 3, breakerCoolDownMs: 5_000 },
  ) {
    this.maxBytes = maxBytes;
    this.breaker = new CircuitBreaker({
      name: 'redis_query_cache',
      whileOpen: 'analytics answered by the engine without the result cache',
      timeoutMs: CACHE_COMMAND_TIMEOUT_MS,
      failureThreshold: guard.breakerFailures,
      coolDownMs: guard.breakerCoolDownMs,
      observer: guard.observer,
    });
    const base = `${prefix}:qcache:`;
    this.keys = {
      entry: `${base}e:`,
      tag: base,
      recency: `${base}recency`,
      bytes: `${base}bytes`,
      sequence: `${base}seq`,
    };
    // Failures count as misses.
    this.redis = guardedRedis(url, this.breaker, {
      commandTimeout: CACHE_COMMAND_TIMEOUT_MS,
    }) as ScriptedRedis;
    this.redis.defineCommand('resultSet', { numberOfKeys: 4, lua: SET_SCRIPT });
    this.redis.defineCommand('resultGet', { numberOfKeys: 3, lua: GET_SCRIPT });
    this.redis.defineCommand('resultClear', { numberOfKeys: 2, lua: CLEAR_SCRIPT });
    this.redis.defineCommand('resultForget', { numberOfKeys: 2, lua: FORGET_SCRIPT });
  }

  /** Waits briefly for the connection, so the first queries after start-up can use it. */
  async ready(timeoutMs = 2_000): Promise<this> {
    await redisReady(this.redis, timeoutMs);
    return this;
  }

  async get(id: string): Promise<string | undefined> {
    const { entry, recency, sequence } = this.keys;
    const value = await this.breaker.run(() =>
      this.redis.resultGet(`${entry}${id}`, recency, sequence, id),
    );
    return value ?? undefined;
  }

  async set(id: string, value: string, tags: readonly string[] = []): Promise<number> {
    if (Buffer.byteLength(value) > this.maxBytes / MAX_ENTRY_SHARE) return 0;
    const { entry, tag, recency, bytes, sequence } = this.keys;
    return this.breaker.run(() =>
      this.redis.resultSet(
        `${entry}${id}`,
        recency,
        bytes,
        sequence,
        id,
        value,
        this.maxBytes,
        entry,
        tag,
        ...tags.map(tagId),
      ),
    );
  }

  async forget(name: string): Promise<number> {
    const { entry, tag, recency, bytes } = this.keys;
    return this.breaker.run(() =>
      this.redis.resultForget(recency, bytes, entry, tag, tagId(name), tagId(ANY_TAG)),
    );
  }

  async clear(): Promise<void> {
    const { entry, tag, recency, bytes } = this.keys;
    await this.breaker.run(() => this.redis.resultClear(recency, bytes, entry, tag));
  }

  async ping(): Promise<void> {
    await this.breaker.run(() => this.redis.ping());
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
