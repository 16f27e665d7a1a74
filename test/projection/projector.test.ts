import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InsertPacing } from '../../libs/projection/insert-pacing.ts';
import { drainOutbox, projectBatch } from '../../libs/projection/projector.ts';
import {
  type ClickHouse,
  migrateClickHouse,
  openClickHouse,
} from '../../libs/storage/clickhouse.ts';
import { openPostgres, type Postgres } from '../../libs/storage/postgres.ts';
import { migratePostgres } from '../../libs/storage/postgres-migrations.ts';
import { appendFacts } from '../../libs/tasks/outbox.repository.ts';
import {
  createTestDatabase,
  migratedPglite,
  type TestDatabase,
  tempDir,
  waitFor,
} from '../support/engines.ts';
import { expectRollupsMatchFacts, factFor } from '../support/projection-invariants.ts';

/** Facts of one instant: where a test's facts land in time is not what it tests. */
const fact = (business: string, gid: string) =>
  factFor(business, gid, new Date('2026-11-22T09:00:00Z'));

async function counts(ch: ClickHouse, business: string) {
  const result = await ch.client.query({
    query: 'SELECT count() AS n, uniqExact(fact_id) AS u FROM facts WHERE business = {b:String}',
    query_params: { b: business },
    format: 'JSONEachRow',
  });
  return (await result.json<{ n: number; u: number }>())[0];
}

/**
 * Waits until `expected` facts of the business are past every running transaction, so one drain
 * sees them all: on a shared server another test file's open transaction holds them back.
 */
async function untilVisible(db: Postgres['db'], business: string, expected: number) {
  await waitFor(
    async () => {
      const { rows } = await sql<{ n: string }>`
        select count(*) as n from outbox
        where business = ${business} and xid < pg_snapshot_xmin(pg_current_snapshot())`.execute(db);
      return Number(rows[0]?.n) >= expected;
    },
    { timeoutMs: 60_000, intervalMs: 50 },
  );
}

/**
 * Drains until `expected` facts went through. On a shared server, another test file's open write
 * transaction holds back every later one for a moment (the late-commit rule is cluster-wide).
 */
async function drainUntil(deps: Parameters<typeof drainOutbox>[0], expected: number) {
  let total = 0;
  await waitFor(
    async () => {
      total += await drainOutbox(deps);
      return total >= expected;
    },
    { timeoutMs: 60_000, intervalMs: 50 },
  );
  return total;
}

const engines = [
  { name: 'PGlite', server: false },
  { name: 'Postgres server', server: true },
];

describe.each(engines)('projector on $name', ({ server }) => {
  let pg: Postgres;
  let ch: ClickHouse;
  let database: TestDatabase | undefined;

  beforeAll(async () => {
    const dir = await tempDir();
    database = server ? await createTestDatabase() : undefined;
    pg = await openPostgres(
      database ? { url: database.url } : { dataDir: await migratedPglite(`${dir}/pg`) },
    );
    await migratePostgres(pg.db);
    ch = await openClickHouse({ dataDir: `${dir}/ch-${server}` });
    await migrateClickHouse(ch.client);
  });
  afterAll(async () => {
    await pg.close();
    await ch.close();
    await database?.drop();
  });

  const deps = (extra = {}) => ({ db: pg.db, clickhouse: ch.client, batchSize: 7, ...extra });
  const business = (label: string) => `${label}_${server ? 'pg' : 'lite'}`;

  it('streams every fact into ClickHouse in batches, each exactly once', async () => {
    const b = business('stream');
    for (let i = 0; i < 30; i++) await appendFacts(pg.db, [fact(b, `t${i}`)]);
    expect(await drainUntil(deps(), 30)).toBe(30);
    expect(await drainOutbox(deps())).toBe(0);
    expect(await counts(ch, b)).toEqual({ n: 30, u: 30 });
  });

  it('re-sends a batch that failed after the insert, and ClickHouse keeps it once', async () => {
    const b = business('retry');
    for (let i = 0; i < 10; i++) await appendFacts(pg.db, [fact(b, `t${i}`)]);
    let failures = 2;
    const failing = deps({
      afterInsert: () => {
        if (failures-- > 0) throw new Error('crash before checkpoint');
      },
    });
    await expect(projectBatch(failing)).rejects.toThrow('crash before checkpoint');
    await expect(projectBatch(failing)).rejects.toThrow('crash before checkpoint');
    // New facts arrive while the batch is pending: the retry must not widen the batch.
    for (let i = 10; i < 12; i++) await appendFacts(pg.db, [fact(b, `t${i}`)]);
    await untilVisible(pg.db, b, 12);
    await drainOutbox(failing);
    expect(await counts(ch, b)).toEqual({ n: 12, u: 12 });
    // The retried inserts reached the rollups' views too: they must hold each fact once.
    await expectRollupsMatchFacts(ch.client);
  });

  it('never holds a full batch, and stops waiting when told to stop', async () => {
    const b = business('backlog');
    for (let i = 0; i < 16; i++) await appendFacts(pg.db, [fact(b, `t${i}`)]);
    await untilVisible(pg.db, b, 16);
    const stop = new AbortController();
    const sizes: number[] = [];
    // A minute's linger: were any batch of the backlog held, or the wait after the small one
    // not cut short by the stop, this test would time out.
    const drained = await drainOutbox(
      deps({
        pacing: new InsertPacing(60_000),
        signal: stop.signal,
        onBatch: ({ facts }: { facts: number }) => {
          sizes.push(facts);
          if (facts < 7) stop.abort();
        },
      }),
    );
    expect(sizes).toEqual([7, 7, 2]);
    expect(drained).toBe(16);
    expect(await counts(ch, b)).toEqual({ n: 16, u: 16 });
  });

  it('gathers the facts that arrive after a small batch into one insert a linger later', async () => {
    const b = business('linger');
    await appendFacts(pg.db, [fact(b, 'first')]);
    await untilVisible(pg.db, b, 1);
    const stop = new AbortController();
    const batches: { facts: number; started: number }[] = [];
    let firstDone!: () => void;
    const first = new Promise<void>((resolve) => {
      firstDone = resolve;
    });
    const drain = drainOutbox(
      deps({
        pacing: new InsertPacing(2_000),
        signal: stop.signal,
        onBatch: ({ facts, seconds }: { facts: number; seconds: number }) => {
          batches.push({ facts, started: performance.now() - seconds * 1000 });
          if (batches.length === 1) firstDone();
          else stop.abort();
        },
      }),
    );
    await first;
    // Written while the projector lingers; without pacing they would go at once, on their own.
    await appendFacts(pg.db, [fact(b, 'second'), fact(b, 'third'), fact(b, 'fourth')]);
    expect(await drain).toBe(4);
    expect(batches.map(({ facts }) => facts)).toEqual([1, 3]);
    expect(batches[1]!.started - batches[0]!.started).toBeGreaterThanOrEqual(1_900);
    expect(await counts(ch, b)).toEqual({ n: 4, u: 4 });
  });
});

describe('projector and commit order (Postgres server)', () => {
  let pg: Postgres;
  let ch: ClickHouse;
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
    pg = await openPostgres({ url: database.url });
    await migratePostgres(pg.db);
    ch = await openClickHouse({ dataDir: `${await tempDir()}/ch` });
    await migrateClickHouse(ch.client);
  });
  afterAll(async () => {
    await pg.close();
    await ch.close();
    await database.drop();
  });

  it('never skips a fact whose transaction commits after a higher id', async () => {
    const deps = { db: pg.db, clickhouse: ch.client, batchSize: 100 };
    let releaseSlow!: () => void;
    const slowMayCommit = new Promise<void>((resolve) => {
      releaseSlow = resolve;
    });
    let slowWrote!: () => void;
    const slowHasWritten = new Promise<void>((resolve) => {
      slowWrote = resolve;
    });
    // The slow transaction takes the lower outbox id and commits last.
    const slow = pg.db.transaction().execute(async (trx) => {
      await appendFacts(trx, [fact('order', 'slow')]);
      slowWrote();
      await slowMayCommit;
    });
    await slowHasWritten;
    await appendFacts(pg.db, [fact('order', 'fast')]);
    const ids = await pg.db.selectFrom('outbox').select(['id', 'task_gid']).orderBy('id').execute();
    expect(ids.map((row) => row.task_gid)).toEqual(['fast']);

    // While the slow transaction runs, nothing past it is taken, so the cursor cannot jump it.
    expect(await drainOutbox(deps)).toBe(0);
    releaseSlow();
    await slow;
    expect(await drainUntil(deps, 2)).toBe(2);
    const all = await pg.db.selectFrom('outbox').select(['id', 'task_gid']).orderBy('id').execute();
    expect(all.map((row) => row.task_gid)).toEqual(['slow', 'fast']);
    expect(await counts(ch, 'order')).toEqual({ n: 2, u: 2 });
  });

  it('keeps exactly-once when several projectors race', async () => {
    for (let i = 0; i < 200; i++) await appendFacts(pg.db, [fact('race', `t${i}`)]);
    const deps = { db: pg.db, clickhouse: ch.client, batchSize: 13 };
    await Promise.all([drainOutbox(deps), drainOutbox(deps), drainOutbox(deps)]);
    await waitFor(async () => {
      await drainOutbox(deps);
      return ((await counts(ch, 'race'))?.n ?? 0) >= 200;
    });
    expect(await counts(ch, 'race')).toEqual({ n: 200, u: 200 });
    const checkpoint = await sql<{ pending_id: number | null }>`
      select pending_id from projector_checkpoints where name = 'facts'`.execute(pg.db);
    expect(checkpoint.rows[0]?.pending_id).toBeNull();
  });
});
