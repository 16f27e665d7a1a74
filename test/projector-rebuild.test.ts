import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../apps/server/cairn.ts';
import { REBUILD_TABLE, rebuildFacts } from '../libs/projection/rebuild.ts';
import { authHeader } from './support/auth.ts';
import { type TestConfig, testConfig, waitFor } from './support/engines.ts';
import { http } from './support/http.ts';
import { type ProjectionTotals, projectionTotals } from './support/projection-invariants.ts';

describe('projector rebuild', () => {
  let setup: TestConfig;
  let cairn: Cairn;
  let auth: Record<string, string>;
  beforeAll(async () => {
    setup = await testConfig();
    // The writer below runs flat out for the whole rebuild; rate limits are not under test.
    cairn = await startCairn({
      config: setup.config,
      rateLimits: { anonymous: 1e9, user: 1e9, service_account: 1e9 },
    });
    auth = await authHeader(cairn, { businesses: ['rb_one', 'rb_two'] });
  });
  afterAll(async () => {
    await cairn.close();
    await setup.cleanup();
  });

  const createTask = async (business: string, name: string) => {
    const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
      headers: auth,
      body: { business, name },
    });
    expect(res.status).toBe(201);
  };
  const totals = () => projectionTotals(cairn.engines.postgres.db, cairn.engines.clickhouse.client);
  const caughtUp = (t: ProjectionTotals) =>
    Object.values(t.clickhouse).reduce((a, b) => a + b, 0) >= t.outbox && t.rows >= t.outbox;

  it('re-projects every fact into a fresh table, swaps it in, and keeps answering', async () => {
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
          headers: auth,
          body: { metrics: ['tasks_created'], dimensions: ['business'], period: 'today' },
        });
        statuses.push(res.status);
      }
    })();
    const progress: number[] = [];
    const { facts } = await rebuildFacts({
      db: cairn.engines.postgres.db,
      clickhouse: ch,
      batchSize: 7,
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
