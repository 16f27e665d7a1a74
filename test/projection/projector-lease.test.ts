import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countUnprojected, loadCheckpoint } from '../../libs/projection/outbox-reader.ts';
import { drainOutbox, FACTS_CHECKPOINT, projectBatch } from '../../libs/projection/projector.ts';
import { LeaseLostError, ProjectorLease } from '../../libs/projection/projector-lease.ts';
import {
  type ClickHouse,
  migrateClickHouse,
  openClickHouse,
} from '../../libs/storage/clickhouse.ts';
import { openPostgres, type Postgres } from '../../libs/storage/postgres.ts';
import { appendFacts } from '../../libs/tasks/outbox.repository.ts';
import { tempDir, useMigratedPostgres, waitFor } from '../support/engines.ts';
import { factFor } from '../support/projection-invariants.ts';

/** Short lifetimes so a lost lease runs out within a test; renewals every quarter of it. */
const TTL_MS = 1_500;

describe('the projector lease', () => {
  const postgres = useMigratedPostgres();
  /** Each lease on its own connection pool: one can lose its database while the other keeps it. */
  const pools: Postgres[] = [];
  const leases: ProjectorLease[] = [];
  const open = async () => {
    const pg = await openPostgres({ url: postgres.url });
    pools.push(pg);
    const lease = new ProjectorLease(pg.db, { ttlMs: TTL_MS, name: `lease-${pools.length}` });
    leases.push(lease);
    return { pg, lease };
  };
  afterAll(async () => {
    for (const lease of leases) await lease.stop().catch(() => {});
    for (const pg of pools) await pg.close().catch(() => {});
  });

  it('is held by one process at a time; a graceful stop hands it over at once', async () => {
    const a = await open();
    const b = new ProjectorLease(a.pg.db, { ttlMs: 20_000, name: 'handover' });
    const first = new ProjectorLease(a.pg.db, { ttlMs: 20_000, name: 'handover' });
    leases.push(b, first);
    await first.start();
    await b.start();
    expect(first.leading).toBe(true);
    expect(b.leading).toBe(false);
    expect(() => b.claim()).toThrow(LeaseLostError);
    const changes: boolean[] = [];
    b.watch((leading) => changes.push(leading));
    await first.stop();
    // A 20 s lease given up: taken at the standby's next try, a quarter of it at most.
    await waitFor(async () => b.leading || undefined, { timeoutMs: 30_000, intervalMs: 50 });
    expect(changes).toEqual([true]);
    expect(first.leading).toBe(false);
  });

  it('runs out when its holder loses the database; the next holder fences the old one out', async () => {
    const a = await open();
    const other = await openPostgres({ url: postgres.url });
    pools.push(other);
    const old = new ProjectorLease(a.pg.db, { ttlMs: TTL_MS, name: 'fenced' });
    const next = new ProjectorLease(other.db, { ttlMs: TTL_MS, name: 'fenced' });
    leases.push(old, next);
    await old.start();
    await next.start();
    const epoch = old.claim();
    // The old holder's database goes away: it can neither renew nor learn it has lost.
    await a.pg.close();
    await waitFor(async () => next.leading || undefined, { timeoutMs: 30_000, intervalMs: 50 });
    expect(next.claim()).toBe(epoch + 1);
    // Locally the old lease has run out too: the old holder would insert nothing.
    expect(old.leading).toBe(false);
    expect(() => old.assertCurrent(epoch)).toThrow(LeaseLostError);
    // And in the database its epoch no longer opens a transaction's fence.
    await expect(other.db.transaction().execute((trx) => old.fence(trx, epoch))).rejects.toThrow(
      LeaseLostError,
    );
  });
});

describe('a projector that lost its lease', () => {
  const postgres = useMigratedPostgres();
  let ch: ClickHouse;
  beforeAll(async () => {
    ch = await openClickHouse({ dataDir: `${await tempDir()}/ch` });
    await migrateClickHouse(ch.client);
  }, 120_000);
  afterAll(() => ch?.close());

  it('claims, inserts and commits nothing; the new holder projects every fact once', async () => {
    const db = postgres.pg.db;
    const clickhouse = ch.client;
    await appendFacts(
      db,
      Array.from({ length: 30 }, (_, i) => factFor('acme', `t${i}`)),
    );
    const partitioned = await openPostgres({ url: postgres.url });
    const old = new ProjectorLease(partitioned.db, { ttlMs: TTL_MS });
    const next = new ProjectorLease(db, { ttlMs: TTL_MS });
    try {
      await old.start();
      await next.start();
      expect(old.leading).toBe(true);
      // The old holder fixes a batch of ten, but cannot reach ClickHouse with it.
      const unreachable = {
        ...clickhouse,
        insert: () => Promise.reject(new Error('connect ECONNREFUSED')),
      } as unknown as typeof clickhouse;
      await expect(
        projectBatch({
          db: partitioned.db,
          clickhouse: unreachable,
          batchSize: 10,
          leadership: old,
        }),
      ).rejects.toThrow(/ECONNREFUSED/);
      const fixed = await loadCheckpoint(db, FACTS_CHECKPOINT);
      expect(fixed.pending?.count).toBe(10);
      // Then it loses its database, and with it the lease.
      await partitioned.close();
      await waitFor(async () => next.leading || undefined, { timeoutMs: 30_000, intervalMs: 50 });
      expect(old.leading).toBe(false);
      // Back, it claims nothing: its drain stops at once.
      expect(await drainOutbox({ db, clickhouse, batchSize: 10, leadership: old })).toBe(0);
      await expect(
        projectBatch({ db, clickhouse, batchSize: 10, leadership: old }),
      ).rejects.toThrow(LeaseLostError);
      // The new holder finishes the fixed batch under its token, then the rest.
      expect(await drainOutbox({ db, clickhouse, batchSize: 10, leadership: next })).toBe(30);
      const checkpoint = await loadCheckpoint(db, FACTS_CHECKPOINT);
      expect(checkpoint.pending).toBeNull();
      expect(await countUnprojected(db, checkpoint.cursor)).toBe(0);
      const counted = await clickhouse.query({
        query: 'SELECT count() AS n, uniqExact(fact_id) AS distinct_facts FROM facts',
        format: 'JSONEachRow',
      });
      expect(await counted.json()).toEqual([{ n: 30, distinct_facts: 30 }]);
    } finally {
      await old.stop().catch(() => {});
      await next.stop();
    }
  }, 120_000);
});
