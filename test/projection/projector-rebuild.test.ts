import { beforeAll, describe, expect, it } from 'vitest';
import { ROLLUP_NAMES } from '../../libs/analytics/sources/rollups.ts';
import { REBUILD_TABLE, rebuildFacts } from '../../libs/projection/rebuild.ts';
import { unlimited, useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';
import {
  expectRollupsMatchFacts,
  type ProjectionTotals,
  projectionTotals,
} from '../support/projection-invariants.ts';

describe('projector rebuild', () => {
  const cairn = useCairn({ rateLimits: unlimited(), businesses: ['rb_one', 'rb_two'] });
  beforeAll(async () => {
    // The writer below runs flat out for the whole rebuild; rate limits are not under test.
  });

  const createTask = async (business: string, name: string) => {
    const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
      headers: cairn.auth,
      body: { business, name },
    });
    expect(res.status).toBe(201);
  };
  const totals = () => projectionTotals(cairn.db, cairn.engines.clickhouse.client);
  const caughtUp = (t: ProjectionTotals) =>
    Object.values(t.clickhouse).reduce((a, b) => a + b, 0) >= t.outbox && t.rows >= t.outbox;

  it('re-projects every fact into a fresh table, swaps it in, and keeps answering', {
    timeout: 120_000,
  }, async () => {
    for (let i = 0; i < 40; i++) await createTask(i % 2 ? 'rb_one' : 'rb_two', `t${i}`);
    await waitFor(async () => caughtUp(await totals()));

    // Damage the projection: lose one business's facts and double another fact.
    const ch = cairn.engines.clickhouse.client;
    await ch.command({
      query: "ALTER TABLE facts DELETE WHERE business = 'rb_one'",
      clickhouse_settings: { mutations_sync: '1' },
    });
    await ch.command({
      query: "INSERT INTO facts SELECT * FROM facts WHERE business = 'rb_two' LIMIT 1",
    });
    expect((await totals()).clickhouse).not.toEqual((await totals()).postgres);

    // Writes and queries go on during the rebuild.
    let running = true;
    const statuses: number[] = [];
    const traffic = (async () => {
      for (let i = 0; running; i++) {
        await createTask('rb_one', `during${i}`);
        const res = await http(cairn.url, 'POST', '/api/v1/query', {
          headers: cairn.auth,
          body: { metrics: ['tasks_created'], dimensions: ['business'], period: 'today' },
        });
        statuses.push(res.status);
      }
    })();
    const progress: number[] = [];
    const { facts } = await rebuildFacts({
      db: cairn.db,
      clickhouse: ch,
      batchSize: 7,
      builds: cairn.rollups,
      onProgress: ({ projected }) => progress.push(projected),
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    running = false;
    await traffic;

    expect(facts).toBeGreaterThanOrEqual(40);
    expect(progress.length).toBeGreaterThan(5);
    expect(statuses.length).toBeGreaterThan(0);
    expect(new Set(statuses)).toEqual(new Set([200]));
    await waitFor(async () => caughtUp(await totals()));
    const after = await totals();
    expect({ rows: after.rows, distinct: after.distinct }).toEqual({
      rows: after.outbox,
      distinct: after.outbox,
    });
    expect(after.clickhouse).toEqual(after.postgres);
    // The damage reached the rollups through their views; the rebuild refilled them from the
    // new facts, and they are in use again.
    await expectRollupsMatchFacts(ch);
    expect([...cairn.rollups.ready()].sort()).toEqual([...ROLLUP_NAMES].sort());

    // The old table is gone and the new one kept the retry-proof deduplication window.
    const tables = await ch.query({
      query: 'SELECT name FROM system.tables WHERE database = currentDatabase()',
      format: 'JSONEachRow',
    });
    expect((await tables.json<{ name: string }>()).map((t) => t.name)).not.toContain(REBUILD_TABLE);
    const ddl = await ch.query({ query: 'SHOW CREATE TABLE facts', format: 'TabSeparatedRaw' });
    expect(await ddl.text()).toContain('non_replicated_deduplication_window = 10000');
  });
});
