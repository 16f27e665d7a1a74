import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrivateServer, privateRedis } from '../dev-tools/private-servers.ts';
import { ResultCache } from '../libs/analytics/execute/result-cache.ts';
import { RedisResultStore } from '../libs/storage/redis-result-store.ts';
import { MemoryResultStore, type ResultStore } from '../libs/storage/result-store.ts';
import { SERVER_REDIS_URL, uniqueName } from './support/engines.ts';

const entry = (fill: string) => fill.repeat(100);

/** Byte bound and least-recently-used eviction, the same for both stores. */
async function expectBoundedLru(store: ResultStore) {
  // 1,000 bytes hold ten 100-byte entries.
  for (let i = 0; i < 10; i++) expect(await store.set(`k${i}`, entry(String(i)))).toBe(0);
  expect(await store.get('k0')).toBe(entry('0'));
  // k0 was just used: the eleventh entry evicts k1, the least recently used.
  expect(await store.set('k10', entry('a'))).toBe(1);
  expect(await store.get('k1')).toBeUndefined();
  expect(await store.get('k0')).toBe(entry('0'));
  // An entry of 200 bytes pushes out two more.
  expect(await store.set('big', 'x'.repeat(200))).toBe(2);
  for (const gone of ['k2', 'k3']) expect(await store.get(gone)).toBeUndefined();
  for (const kept of ['k0', 'k4', 'k9', 'k10', 'big']) expect(await store.get(kept)).toBeDefined();
  // Replacing an entry accounts only the difference.
  expect(await store.set('k5', entry('5'))).toBe(0);
  // More than a quarter of the bound is not kept at all.
  expect(await store.set('huge', 'y'.repeat(251))).toBe(0);
  expect(await store.get('huge')).toBeUndefined();
  // Cleared: nothing is found, and the whole bound is free again.
  await store.clear();
  for (const gone of ['k0', 'k4', 'k9', 'k10', 'big'])
    expect(await store.get(gone)).toBeUndefined();
  for (let i = 0; i < 10; i++) expect(await store.set(`c${i}`, entry(String(i)))).toBe(0);
}

describe('result stores', () => {
  it('memory: bounded in bytes, least recently used first', async () => {
    const store = new MemoryResultStore(1_000);
    await expectBoundedLru(store);
    expect(store.size.bytes).toBeLessThanOrEqual(1_000);
  });

  describe('Redis', () => {
    const stores: RedisResultStore[] = [];
    const open = (prefix: string, url = SERVER_REDIS_URL) => {
      const store = new RedisResultStore(url, prefix, 1_000);
      stores.push(store);
      return store.ready();
    };
    afterAll(async () => {
      for (const store of stores) await store.close();
    });

    it('bounded in bytes, least recently used first', async () => {
      await expectBoundedLru(await open(uniqueName('cairn_rs')));
    });

    it('one cache for every instance: what one stores, another finds, and the bound is shared', async () => {
      const prefix = uniqueName('cairn_rs');
      const [one, two] = [await open(prefix), await open(prefix)];
      await one.set('answer', entry('a'));
      expect(await two.get('answer')).toBe(entry('a'));
      for (let i = 0; i < 9; i++) await two.set(`k${i}`, entry(String(i)));
      expect(await one.get('answer')).toBe(entry('a'));
      // Eleven entries between them: the bound evicts across instances.
      expect(await one.set('last', entry('z'))).toBe(1);
      expect(await one.get('k0')).toBeUndefined();
      expect(await one.get('answer')).toBe(entry('a'));
    });
  });

  describe('a Redis that dies', () => {
    let redis: PrivateServer;
    beforeAll(async () => {
      redis = await privateRedis();
    });
    afterAll(async () => {
      await redis?.stop();
    });

    it('costs misses, never a failed query, and is used again once back', async () => {
      const store = await new RedisResultStore(redis.url, uniqueName('cairn_rs'), 10_000).ready();
      const failures: unknown[] = [];
      let misses = 0;
      const cache = new ResultCache(store, {
        failed: (error) => failures.push(error),
        miss: () => misses++,
      });
      await cache.set('k', { rows: [1] });
      expect(await cache.get('k')).toEqual({ rows: [1] });
      await redis.kill();
      expect(await cache.get('k')).toBeUndefined();
      await cache.set('k2', { rows: [2] });
      expect(failures.length).toBeGreaterThanOrEqual(2);
      expect(misses).toBe(1);
      await expect(store.ping()).rejects.toThrow();

      await redis.start();
      await expect
        .poll(
          async () => {
            await cache.set('k3', { rows: [3] });
            return cache.get('k3');
          },
          { timeout: 30_000, interval: 100 },
        )
        .toEqual({ rows: [3] });
      await store.close();
    }, 60_000);
  });
});
