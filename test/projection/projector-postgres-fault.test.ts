import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrivateServer, privatePostgres } from '../../dev-tools/private-servers.ts';
import { SERVER_REDIS_URL, waitFor } from '../support/engines.ts';
import {
  expectEveryFactOnce,
  type FaultRig,
  projectedRows,
  projectorRig,
  sleep,
  streamWrites,
} from '../support/fault-harness.ts';

describe('projector with Postgres restarted mid-stream', () => {
  let postgres: PrivateServer;
  let rig: FaultRig;
  beforeAll(async () => {
    // A cluster of its own: the machine's Postgres serves other test files at the same time.
    postgres = await privatePostgres();
    rig = await projectorRig({ databaseUrl: postgres.url, redisUrl: SERVER_REDIS_URL });
  });
  afterAll(async () => {
    await rig?.close();
    await postgres?.stop();
  });

  it('keeps projecting after an immediate shutdown and restart, every fact exactly once', async () => {
    const writes = streamWrites(rig, 'w');
    await waitFor(async () => (await projectedRows(rig)) > 50);
    // Immediate mode is a crash for the server: no checkpoint, every connection cut mid-query.
    await postgres.kill();
    await sleep(500);
    await postgres.start();
    const afterRestart = writes.committed;
    await waitFor(async () => writes.committed > afterRestart + 100, { timeoutMs: 20_000 });
    await writes.stop();
    expect(writes.failed).toBeGreaterThan(0);
    await expectEveryFactOnce(rig);
  }, 300_000);
});
