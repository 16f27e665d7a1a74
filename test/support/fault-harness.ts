import { expect } from 'vitest';
import { type RunningProjector, startProjector } from '../../libs/projection/projector-jobs.ts';
import { BullQueue } from '../../libs/storage/bullmq-queue.ts';
import {
  type ClickHouse,
  migrateClickHouse,
  openClickHouse,
} from '../../libs/storage/clickhouse.ts';
import { openPostgres, type Postgres } from '../../libs/storage/postgres.ts';
import { migratePostgres } from '../../libs/storage/postgres-migrations.ts';
import { appendFacts } from '../../libs/tasks/outbox.repository.ts';
import { tempDir, uniqueName, waitFor } from './engines.ts';
import { expectRollupsMatchFacts, factFor, projectionTotals } from './projection-invariants.ts';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface FaultRig {
  pg: Postgres;
  ch: ClickHouse;
  /** What the API does after each commit: a best-effort wake-up job. */
  wake(): void;
  /** Whether the queue delivers jobs (its Redis breaker is closed). */
  delivering(): boolean;
  close(): Promise<void>;
}

/** A projector worker as production runs it: BullMQ on `redisUrl`, Postgres, chDB. */
export async function projectorRig(options: {
  databaseUrl: string;
  redisUrl: string;
}): Promise<FaultRig> {
  const pg = await openPostgres({ url: options.databaseUrl });
  await migratePostgres(pg.db);
  const ch = await openClickHouse({ dataDir: `${await tempDir()}/ch` });
  await migrateClickHouse(ch.client);
  const queue = new BullQueue({ redisUrl: options.redisUrl, prefix: uniqueName('cairn_f') });
  const projector: RunningProjector = await startProjector(
    queue,
    { db: pg.db, clickhouse: ch.client, batchSize: 40 },
    100,
  );
  return {
    pg,
    ch,
    wake() {
      queue.add({ name: 'drain-outbox' }, { dedupId: 'drain-outbox' }).catch(() => {});
    },
    delivering: () => queue.delivering(),
    async close() {
      await projector.stop();
      await queue.close().catch(() => {});
      await ch.close();
      await pg.close();
    },
  };
}

export interface WriteStream {
  readonly committed: number;
  readonly failed: number;
  stop(): Promise<void>;
}

/**
 * Writes facts in small transactions until stopped, waking the projector after each commit.
 * A write whose engine is down rolls back and the loop carries on.
 */
export function streamWrites(rig: FaultRig, label: string): WriteStream {
  let running = true;
  let committed = 0;
  let failed = 0;
  const done = (async () => {
    for (let i = 0; running; i++) {
      try {
        await rig.pg.db.transaction().execute(async (trx) => {
          const business = `b${i % 3}`;
          await appendFacts(trx, [
            factFor(business, `${label}${i}a`),
            factFor(business, `${label}${i}b`),
          ]);
        });
        committed += 2;
        rig.wake();
      } catch {
        failed += 1;
        await sleep(20);
      }
      await sleep(2);
    }
  })();
  return {
    get committed() {
      return committed;
    },
    get failed() {
      return failed;
    },
    async stop() {
      running = false;
      await done;
    },
  };
}

/**
 * Waits for the projector to catch up, then checks ClickHouse holds every outbox fact once. The
 * wait is generous: on the machine's shared Postgres, any other session's open transaction holds
 * facts back (the late-commit rule), and a busy machine stretches that (seen on CI at 20 s).
 */
export async function expectEveryFactOnce(rig: FaultRig): Promise<void> {
  await waitFor(
    async () => {
      const t = await projectionTotals(rig.pg.db, rig.ch.client);
      const grouped = Object.values(t.clickhouse).reduce((a, b) => a + b, 0);
      return t.rows >= t.outbox && grouped >= t.outbox;
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
  const totals = await projectionTotals(rig.pg.db, rig.ch.client);
  expect(totals.outbox).toBeGreaterThan(0);
  expect({ rows: totals.rows, distinct: totals.distinct }).toEqual({
    rows: totals.outbox,
    distinct: totals.outbox,
  });
  expect(totals.clickhouse).toEqual(totals.postgres);
  await expectRollupsMatchFacts(rig.ch.client);
}

/** Facts in ClickHouse right now (any state). */
export async function projectedRows(rig: FaultRig): Promise<number> {
  return (await projectionTotals(rig.pg.db, rig.ch.client)).rows;
}
