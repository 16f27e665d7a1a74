import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrivateServer, privateRedis } from '../../dev-tools/private-servers.ts';
import { ResultCache } from '../../libs/analytics/execute/result-cache.ts';
import { RedisResultStore } from '../../libs/storage/redis-result-store.ts';
import { ANY_TAG, MemoryResultStore, type ResultStore } from '../../libs/storage/result-store.ts';
import { SERVER_REDIS_URL, uniqueName } from '../support/engines.ts';

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

/**
 * `forget(tag)` drops the entries stored with that tag and those read from every business, and
 * nothing else; evicted and replaced entries leave no tag behind, and the bytes they held are
 * free again.
 */
async function expectForgetByTag(store: ResultStore) {
  await store.set('a', entry('a'), ['erased']);
  await store.set('b', entry('b'), ['kept']);
  await store.set('ab', entry('c'), ['kept', 'erased']);
  await store.set('all', entry('d'), [ANY_TAG]);
  await store.set('untagged', entry('e'));
  // Re-stored without the tag: no longer the erased business's.
  await store.set('moved', entry('f'), ['erased']);
  await store.set('moved', entry('f'), ['kept']);
  expect(await store.forget('erased')).toBe(3);
  for (const gone of ['a', 'ab', 'all']) expect(await store.get(gone)).toBeUndefined();
  for (const kept of ['b', 'untagged', 'moved'])
    expect(await store.get(kept)).toBe(
      kept === 'b' ? entry('b') : kept === 'moved' ? entry('f') : entry('e'),
    );
  expect(await store.forget('erased')).toBe(0);
  // Three entries of 100 bytes left: seven more fit the 1,000 bytes without evicting.
  for (let i = 0; i < 7; i++) expect(await store.set(`n${i}`, entry(String(i)), ['kept'])).toBe(0);
  // Evicting drops an entry from its tags too: forgetting them later finds only live entries.
  expect(await store.set('over', entry('o'), ['other'])).toBe(1);
  expect(await store.forget('kept')).toBe(8);
  expect(await store.get('over')).toBe(entry('o'));
  expect(await store.get('untagged')).toBe(entry('e'));
}

describe('result stores', () => {
  it('memory: bounded in bytes, least recently used first', async () => {
    const store = new MemoryResultStore(1_000);
    await expectBoundedLru(store);
    expect(store.size.bytes).toBeLessThanOrEqual(1_000);
  });

  it('memory: forgets the entries of one business, and only those', async () => {
    const store = new MemoryResultStore(1_000);
    await expectForgetByTag(store);
    expect(store.size).toEqual({ entries: 2, bytes: 200 });
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

    it('forgets the entries of one business, and only those, leaving no tag behind', async () => {
      const prefix = uniqueName('cairn_rs');
      await expectForgetByTag(await open(prefix));
      const redis = new Redis(SERVER_REDIS_URL);
      try {
        const keys = (await redis.keys(`${prefix}:*`)).sort();
        // Two entries left, untagged and of 'other': one tag set and its entry's tag list.
        expect(keys.filter((key) => key.startsWith(`${prefix}:qcache:e:`))).toHaveLength(2);
        expect(keys.filter((key) => key.startsWith(`${prefix}:qcache:t:`))).toHaveLength(1);
        expect(keys.filter((key) => key.startsWith(`${prefix}:qcache:g:`))).toHaveLength(1);
        // Tag keys do not spell the business's name.
        expect(keys.some((key) => key.includes('other'))).toBe(false);
        expect(Number(await redis.get(`${prefix}:qcache:bytes`))).toBe(200);
      } finally {
        redis.disconnect();
      }
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
