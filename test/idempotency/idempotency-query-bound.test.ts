import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { issueToken } from '../../libs/auth/token.service.ts';
import {
  claimKey,
  completeReadClaim,
  type ReadAnswerBound,
} from '../../libs/idempotency/idempotency-store.ts';
import { unlimited, useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';

const MAX_KEYS = 4;
const QUERY = { metrics: ['tasks_created'], period: 'last_7_days', business: 'qb' };

/** The `/query` answers kept for Idempotency-Key are bounded per principal; writes are not. */
describe('Idempotency-Key answers of /query, bounded per principal', () => {
  const cairn = useCairn({
    businesses: ['qb'],
    rateLimits: unlimited(),
    env: { CAIRN_IDEMPOTENCY_QUERY_MAX_KEYS: String(MAX_KEYS) },
  });

  describe('over HTTP', () => {
    const principal = async (kind: 'user' | 'service_account' = 'service_account') => {
      const issued = await issueToken(
        cairn.db,
        { name: 'bound', scopes: ['analytics:read', 'workflows:write'], businesses: ['qb'], kind },
        new Date(),
      );
      const headers = { Authorization: `Bearer ${issued.token}` };
      return {
        owner: `token:${issued.id}`,
        query: (key: string, body: unknown = QUERY) =>
          http(cairn.url, 'POST', '/api/v1/query', {
            headers: { ...headers, 'Idempotency-Key': key },
            body,
          }),
        createTask: (key: string) =>
          http(cairn.url, 'POST', '/api/v1/tasks', {
            headers: { ...headers, 'Idempotency-Key': key },
            body: { business: 'qb', name: `task ${key}` },
          }),
      };
    };

    const keysOf = async (owner: string) =>
      (
        await cairn.db
          .selectFrom('idempotency_keys')
          .select(['key', 'status'])
          .where('principal', '=', owner)
          .orderBy('created_at')
          .execute()
      ).map((row) => `${row.key}:${row.status}`);

    it('evicts the oldest answers past the bound, replays the newest, and leaves others alone', async () => {
      const flood = await principal();
      const other = await principal('user');
      const otherKeys = [randomUUID(), randomUUID()];
      for (const key of otherKeys) expect((await other.query(key)).status).toBe(200);

      // A write with a key, and a claim still running (its request not answered yet): neither is
      // an answer to evict.
      const writeKey = randomUUID();
      const created = await flood.createTask(writeKey);
      expect(created.status, created.text).toBe(201);
      const running = randomUUID();
      await cairn.db
        .insertInto('idempotency_keys')
        .values({
          principal: flood.owner,
          key: running,
          fingerprint: 'a request still running',
          claim_id: randomUUID(),
          status: 'in_progress',
          response_status: null,
          response_headers: null,
          response_body: null,
          created_at: new Date(),
          expires_at: new Date(Date.now() + 86_400_000),
        })
        .execute();

      const keys = Array.from({ length: MAX_KEYS + 3 }, () => randomUUID());
      const first = new Map<string, string>();
      for (const key of keys) {
        const res = await flood.query(key);
        expect(res.status, res.text).toBe(200);
        expect(res.headers.get('idempotent-replayed')).toBeNull();
        first.set(key, res.text);
      }

      // The newest MAX_KEYS answers remain, beside the write's record and the running claim.
      const newest = keys.slice(-MAX_KEYS);
      expect((await keysOf(flood.owner)).sort()).toEqual(
        [
          ...newest.map((key) => `${key}:completed`),
          `${writeKey}:completed`,
          `${running}:in_progress`,
        ].sort(),
      );
      for (const key of newest) {
        const again = await flood.query(key);
        expect(again.status).toBe(200);
        expect(again.headers.get('idempotent-replayed'), key).toBe('true');
        expect(again.text).toBe(first.get(key));
      }
      const replayedWrite = await flood.createTask(writeKey);
      expect(replayedWrite.headers.get('idempotent-replayed')).toBe('true');
      expect(replayedWrite.text).toBe(created.text);

      // An evicted key is a fresh key again: the query runs, and its answer is kept anew (so the
      // oldest of the newest goes).
      const evicted = keys[0] as string;
      const rerun = await flood.query(evicted);
      expect(rerun.status).toBe(200);
      expect(rerun.headers.get('idempotent-replayed')).toBeNull();
      expect((await flood.query(evicted)).headers.get('idempotent-replayed')).toBe('true');
      expect(
        (await flood.query(newest[0] as string)).headers.get('idempotent-replayed'),
      ).toBeNull();

      // The other principal's answers were never in the flood's way.
      for (const key of otherKeys) {
        expect((await other.query(key)).headers.get('idempotent-replayed'), key).toBe('true');
      }
      expect(await keysOf(other.owner)).toHaveLength(otherKeys.length);
    });

    it('holds the bound under concurrent requests once they settle', async () => {
      const flood = await principal();
      // Within the per-principal admission queue (2 running, 8 waiting), so none is refused.
      const keys = Array.from({ length: 8 }, () => randomUUID());
      const answers = await Promise.all(keys.map((key) => flood.query(key)));
      expect(answers.map((res) => res.status)).toEqual(keys.map(() => 200));
      const kept = await keysOf(flood.owner);
      expect(kept).toHaveLength(MAX_KEYS);
      for (const entry of kept) expect(entry).toMatch(/:completed$/);
    });
  });

  describe('the store: answers past the byte bound go first, in the order they were stored', () => {
    const bound: ReadAnswerBound = { maxKeys: 100, maxBytes: 3_000 };

    const store = async (principal: string, key: string, bytes: number) => {
      const ref = { principal, key, claimId: randomUUID() };
      const claim = await claimKey(cairn.db, {
        ...ref,
        fingerprint: key,
        now: new Date(),
        ttlMs: 86_400_000,
        leaseMs: 60_000,
      });
      expect(claim.kind).toBe('claimed');
      const body = JSON.stringify('x'.repeat(bytes - 2));
      return completeReadClaim(cairn.db, ref, { status: 200, headers: {}, body }, bytes, bound);
    };

    const kept = async (principal: string) =>
      sql<{ key: string; bytes: number }>`
      select key, octet_length(response_body) as bytes from idempotency_keys
      where principal = ${principal} order by read_seq`
        .execute(cairn.db)
        .then((result) => result.rows);

    it('keeps the newest answers that fit in maxBytes', async () => {
      const principal = `token:${randomUUID()}`;
      expect(await store(principal, 'a', 1_000)).toEqual({ stored: true, evicted: 0 });
      expect(await store(principal, 'b', 1_000)).toEqual({ stored: true, evicted: 0 });
      expect(await store(principal, 'c', 1_000)).toEqual({ stored: true, evicted: 0 });
      // 4,000 bytes stored in all: a goes.
      expect(await store(principal, 'd', 1_000)).toEqual({ stored: true, evicted: 1 });
      expect((await kept(principal)).map((row) => row.key)).toEqual(['b', 'c', 'd']);
      // A large answer pushes out as many old ones as it needs to fit.
      expect(await store(principal, 'e', 2_500)).toEqual({ stored: true, evicted: 3 });
      const left = await kept(principal);
      expect(left).toEqual([{ key: 'e', bytes: 2_500 }]);
    });

    it('never evicts another principal’s answers, nor a claim still running', async () => {
      const busy = `token:${randomUUID()}`;
      const quiet = `token:${randomUUID()}`;
      await store(quiet, 'q', 2_000);
      const running = { principal: busy, key: 'running', claimId: randomUUID() };
      await claimKey(cairn.db, {
        ...running,
        fingerprint: 'running',
        now: new Date(),
        ttlMs: 86_400_000,
        leaseMs: 60_000,
      });
      for (const key of ['a', 'b', 'c', 'd', 'e']) await store(busy, key, 1_500);
      expect((await kept(busy)).map((row) => row.key)).toEqual(['d', 'e', 'running']);
      expect((await kept(quiet)).map((row) => row.key)).toEqual(['q']);
    });
  });
});
