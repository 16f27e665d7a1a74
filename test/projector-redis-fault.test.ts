import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrivateServer, privateRedis } from '../dev-tools/private-servers.ts';
import { appendFacts } from '../libs/tasks/outbox.repository.ts';
import { createTestDatabase, type TestDatabase, waitFor } from './support/engines.ts';
import {
  expectEveryFactOnce,
  type FaultRig,
  projectedRows,
  projectorRig,
  sleep,
  streamWrites,
} from './support/fault-harness.ts';
import { factFor } from './support/projection-invariants.ts';

describe('projector with Redis killed and restarted mid-stream', () => {
  let redis: PrivateServer;
  let database: TestDatabase;
  let rig: FaultRig;
  beforeAll(async () => {
    // Its own redis-server: the machine's one serves other test files at the same time.
    redis = await privateRedis();
    database = await createTestDatabase();
    rig = await projectorRig({ databaseUrl: database.url, redisUrl: redis.url });
  });
  afterAll(async () => {
    await rig?.close();
    await redis?.stop();
    await database?.drop();
  });

  it('resumes in the same process and ends with every fact exactly once', async () => {
    const before = streamWrites(rig, 'before');
    await waitFor(async () => (await projectedRows(rig)) > 50);
    await redis.kill();
    const atKill = before.committed;
    await waitFor(async () => before.committed > atKill + 100);
    await before.stop();

    // With Redis gone no job can start, so facts written now stay in the outbox (the job that
    // was running when Redis died may finish its drain first: let it).
    await waitFor(async () => {
      const first = await projectedRows(rig);
      await sleep(300);
      return first === (await projectedRows(rig));
    });
    for (let i = 0; i < 30; i++) {
      await appendFacts(rig.pg.db, [factFor(`b${i % 3}`, `outage${i}`)]);
      rig.wake();
    }
    await sleep(500);
    const stranded = await sql<{ n: string }>`select count(*) as n from outbox`.execute(rig.pg.db);
    expect(await projectedRows(rig)).toBeLessThan(Number(stranded.rows[0]?.n));

    // Redis comes back empty (no persistence): the worker reconnects by itself and the
    // re-asserted timer job finds the stranded facts without any new write waking it.
    await redis.start();
    await expectEveryFactOnce(rig);

    const after = streamWrites(rig, 'after');
    await waitFor(async () => after.committed > 100);
    await after.stop();
    await expectEveryFactOnce(rig);
  });
});
