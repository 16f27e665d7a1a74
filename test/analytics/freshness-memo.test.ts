import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openFreshness } from '../../libs/projection/freshness-memo.ts';
import { advanceWatermark } from '../../libs/projection/watermark.ts';
import { openPostgres, type Postgres } from '../../libs/storage/postgres.ts';
import { migratePostgres } from '../../libs/storage/postgres-migrations.ts';
import { appendFacts, type Fact } from '../../libs/tasks/outbox.repository.ts';
import { tempDir, useMigratedPostgres, waitFor } from '../support/engines.ts';

const fact = (occurredAt: Date): Fact => ({
  kind: 'task_created',
  business: 'acme',
  task_gid: `t-${occurredAt.getTime()}`,
  occurred_at: occurredAt,
  payload: {
    name: 'n',
    project: null,
    assignee: null,
    status: 'open',
    previous_status: null,
    due_on: null,
    task_created_at: occurredAt.toISOString(),
  },
});

const NOW = new Date('2026-11-22T12:00:00Z');
const later = (ms: number) => new Date(NOW.getTime() + ms);

describe('projection freshness on embedded Postgres (remembered between changes)', () => {
  let pg: Postgres;
  beforeAll(async () => {
    pg = await openPostgres({ dataDir: await tempDir() });
    await migratePostgres(pg.db);
  });
  afterAll(() => pg.close());

  it('sees a written fact and a moved checkpoint at the next read, as each commits', async () => {
    const freshness = await openFreshness(pg);
    try {
      const empty = await freshness.read(NOW);
      expect(empty).toMatchObject({ dataAsOf: NOW, lagMs: 0 });
      // A remembered reading still answers for a later instant: nothing waits, so it is current.
      expect(await freshness.read(later(5_000))).toMatchObject({
        dataAsOf: later(5_000),
        lagMs: 0,
        watermark: empty.watermark,
      });

      await appendFacts(pg.db, [fact(later(1_000))]);
      expect(await freshness.read(later(61_000))).toMatchObject({
        dataAsOf: later(1_000),
        lagMs: 60_000,
      });
      // The waiting fact has waited longer at a later instant, remembered or not.
      expect((await freshness.read(later(121_000))).lagMs).toBe(120_000);

      await advanceWatermark(pg.db);
      const moved = await freshness.read(later(121_000));
      expect(moved.watermark).not.toBe(empty.watermark);
    } finally {
      await freshness.close();
    }
  });
});

describe('projection freshness on a Postgres server (read at every answer)', () => {
  const server = useMigratedPostgres();

  it('sees a fact written by any session at the next read', async () => {
    const freshness = await openFreshness(server.pg);
    try {
      expect(await freshness.read(NOW)).toMatchObject({ dataAsOf: NOW, lagMs: 0 });
      // Written on a connection of its own, as another instance would.
      const other = await openPostgres({ url: server.url, poolSize: 1 });
      try {
        await appendFacts(other.db, [fact(later(1_000))]);
      } finally {
        await other.close();
      }
      expect(await freshness.read(later(31_000))).toMatchObject({
        dataAsOf: later(1_000),
        lagMs: 30_000,
      });
    } finally {
      await freshness.close();
    }
  });

  it('announces writes only from sessions that opt in, so server commits never take turns', async () => {
    const heard: string[] = [];
    const listening = await server.pg.listen('cairn_projection', {
      onNotify: (payload) => heard.push(payload),
      onState: () => {},
    });
    const marker = async (name: string) => {
      await sql`select pg_notify('cairn_projection', ${name})`.execute(server.pg.db);
      await waitFor(async () => heard.includes(name) || undefined);
    };
    try {
      await marker('listening');
      await appendFacts(server.pg.db, [fact(later(3_000))]);
      await advanceWatermark(server.pg.db);
      // Notifications arrive in commit order: had the writes announced, it would be before this.
      await marker('after plain writes');
      expect(heard).toEqual(['listening', 'after plain writes']);

      await server.pg.db.transaction().execute(async (trx) => {
        await sql`select set_config('cairn.announce_projection', 'on', true)`.execute(trx);
        await appendFacts(trx, [fact(later(4_000))]);
      });
      await marker('after an opted-in write');
      expect(heard).toEqual(['listening', 'after plain writes', '', 'after an opted-in write']);
    } finally {
      await listening.close();
    }
  });
});
