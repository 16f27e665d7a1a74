import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrivateServer, privateRedis } from '../../dev-tools/private-servers.ts';
import { appendFacts } from '../../libs/tasks/outbox.repository.ts';
import { createTestDatabase, type TestDatabase, waitFor } from '../support/engines.ts';
import {
  expectEveryFactOnce,
  type FaultRig,
  projectedRows,
  projectorRig,
  streamWrites,
} from '../support/fault-harness.ts';
import { factFor } from '../support/projection-invariants.ts';

/** Facts no wake-up announces: only a drain the projector starts by itself finds them. */
async function appendUnannounced(rig: FaultRig, label: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await appendFacts(rig.pg.db, [factFor(`b${i % 3}`, `${label}${i}`)]);
  }
}

/** Over 100 facts committed, each commit followed by a wake-up, then the writer stops. */
async function writeWaking(rig: FaultRig, label: string): Promise<void> {
  const writes = streamWrites(rig, label);
  await waitFor(async () => writes.committed > 100);
  await writes.stop();
}

// Each case has its own redis-server: the machine's one serves other test files at the same
// time, and these kill or freeze it.
describe.each([
  {
    outage: 'killed, then restarted empty',
    begin: (redis: PrivateServer) => redis.kill(),
    end: (redis: PrivateServer) => redis.start(),
  },
  {
    outage: 'frozen (SIGSTOP), then thawed',
    begin: (redis: PrivateServer) => redis.pause?.() ?? Promise.resolve(),
    end: (redis: PrivateServer) => redis.resume?.() ?? Promise.resolve(),
  },
])('projector with Redis $outage mid-stream', ({ begin, end }) => {
  let redis: PrivateServer;
  let database: TestDatabase;
  let rig: FaultRig;
  beforeAll(async () => {
    redis = await privateRedis();
    database = await createTestDatabase();
    rig = await projectorRig({ databaseUrl: database.url, redisUrl: redis.url });
  });
  afterAll(async () => {
    await rig?.close();
    await redis?.resume?.();
    await redis?.stop();
    await database?.drop();
  });

  it('keeps projecting without Redis and ends with every fact exactly once', async () => {
    const before = streamWrites(rig, 'before');
    await waitFor(async () => (await projectedRows(rig)) > 50);
    await before.stop();
    await expectEveryFactOnce(rig);

    await begin(redis);
    try {
      // Facts nobody announces, as a projector-role process sees them: it sends no wake-ups,
      // so only its own probing can tell it that no job will come.
      await appendUnannounced(rig, 'silent', 30);
      await expectEveryFactOnce(rig);
      // Writes that keep trying to wake it through the dead queue change nothing.
      await writeWaking(rig, 'during');
      await expectEveryFactOnce(rig);
    } finally {
      await end(redis);
    }

    // Redis answers again (the killed one came back empty): once the queue delivers, the
    // projector leaves draining to its jobs, and the re-asserted timer job finds facts that no
    // wake-up announces.
    await waitFor(async () => rig.delivering(), { timeoutMs: 20_000 });
    await appendUnannounced(rig, 'unannounced', 5);
    await expectEveryFactOnce(rig);

    await writeWaking(rig, 'after');
    await expectEveryFactOnce(rig);
    expect(await projectedRows(rig)).toBeGreaterThan(285);
    // Timer-bound rather than CPU-bound: the breaker's time limits and cool-down, a few polls.
  }, 300_000);
});

describe('projector started while Redis is down', () => {
  let redis: PrivateServer;
  let database: TestDatabase;
  let rig: FaultRig | undefined;
  beforeAll(async () => {
    redis = await privateRedis();
    await redis.kill();
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await rig?.close();
    await redis?.stop();
    await database?.drop();
  });

  it('projects from the start, then hands over to the queue once Redis comes up', async () => {
    rig = await projectorRig({ databaseUrl: database.url, redisUrl: redis.url });
    const running = rig;
    // BullMQ waits for a first connection before any command, so no breaker can open here:
    // only the connection's own state tells the projector that no job will come.
    await appendUnannounced(running, 'early', 30);
    await expectEveryFactOnce(running);
    expect(running.delivering()).toBe(false);

    await redis.start();
    await waitFor(async () => running.delivering(), { timeoutMs: 20_000 });
    await writeWaking(running, 'after');
    await expectEveryFactOnce(running);
  }, 300_000);
});
