import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnalyticsDeps, runQuery } from '../../libs/analytics/query.service.ts';
import { AppError } from '../../libs/http/errors.ts';
import { drainOutbox } from '../../libs/projection/projector.ts';
import { type Engines, openEngines } from '../../libs/storage/engines.ts';
import { createTask } from '../../libs/tasks/task.service.ts';
import { inTaskUnit } from '../../libs/tasks/task-unit.ts';
import { analyticsDeps, projectAll } from '../support/analytics.ts';
import { type TestConfig, testConfig, waitFor } from '../support/engines.ts';

const NOW = new Date('2026-11-22T15:30:00Z');
/** Enough facts that a task-state query takes far longer than a 1 ms budget. */
const HEAVY_FACTS = 2_000_000;

describe('runQuery on chDB: warnings, limits and business scope', () => {
  let setup: TestConfig;
  let engines: Engines;
  let deps: AnalyticsDeps;
  const open = { signal: new AbortController().signal, businesses: null };

  beforeAll(async () => {
    setup = await testConfig();
    engines = await openEngines(setup.config);
    // Facts only: the time-budget case needs a statement that reads millions of rows.
    deps = analyticsDeps(engines, {
      now: () => NOW,
      maxRows: 5,
      staleAfterMs: 5_000,
      rollups: [],
    });
    // 20 projects × 1 task each today in "small"; many facts in "heavy" for the time budget.
    const taskDeps = {
      db: engines.postgres.db,
      now: () => new Date('2026-11-22T10:00:00Z'),
      wakeProjector: () => {},
    };
    for (let i = 0; i < 20; i++) {
      await inTaskUnit(taskDeps, (trx) =>
        createTask(
          trx,
          {
            business: 'small',
            name: `t${i}`,
            project: `p${String(i).padStart(2, '0')}`,
          },
          taskDeps.now(),
        ),
      );
    }
    await projectAll(engines);
    await engines.clickhouse.client.command({
      query: `INSERT INTO facts (fact_id, kind, business, task_gid, occurred_at, project, assignee, status, previous_status, task_created_at)
        SELECT 1000000 + number, if(number < 200000, 'task_created', 'task_updated'), 'heavy', toString(number % 200000),
          toDateTime64('2026-11-01 00:00:00', 3, 'UTC') + toIntervalSecond(number), 'p', 'a', 'open', if(number < 200000, '', 'open'),
          toDateTime64('2026-11-01 00:00:00', 3, 'UTC')
        FROM numbers(${HEAVY_FACTS})`,
    });
  }, 120_000);
  afterAll(async () => {
    await engines.close();
    await setup.cleanup();
  });

  it('says result_truncated when the server cap cuts rows, with the total', async () => {
    const answer = await runQuery(
      deps,
      { metrics: ['tasks_created'], dimensions: ['project'], business: 'small' },
      open,
    );
    expect(answer.data).toHaveLength(5);
    expect(answer.metadata).toMatchObject({ row_count: 5, total_rows: 20 });
    expect(answer.warnings).toEqual([
      expect.objectContaining({ code: 'result_truncated', returned_rows: 5, total_rows: 20 }),
    ]);
  });

  it("honours the caller's own limit and order without a warning", async () => {
    const answer = await runQuery(
      deps,
      {
        metrics: ['tasks_created'],
        dimensions: ['project'],
        business: 'small',
        order_by: [{ field: 'project', direction: 'desc' }],
        limit: 3,
      },
      open,
    );
    expect(answer.data).toEqual([
      { project: 'p19', tasks_created: 1 },
      { project: 'p18', tasks_created: 1 },
      { project: 'p17', tasks_created: 1 },
    ]);
    expect(answer.metadata.total_rows).toBe(20);
    expect(answer.warnings).toBeUndefined();
  });

  it('says partial_result when the time budget runs out, and not when it does not', async () => {
    const request = {
      metrics: ['tasks_created', 'open_tasks'] as const,
      business: 'heavy',
      period: 'this_month' as const,
    };
    const full = await runQuery(deps, { ...request, metrics: [...request.metrics] }, open);
    expect(full.data).toEqual([{ tasks_created: 200_000, open_tasks: 200_000 }]);
    expect(full.warnings).toBeUndefined();

    const cut = await runQuery(
      { ...deps, timeoutMs: 1 },
      { ...request, metrics: [...request.metrics] },
      open,
    );
    expect(cut.warnings).toEqual([
      expect.objectContaining({ code: 'partial_result', timeout_ms: 1 }),
    ]);
    // 'break' mode stops reading: what comes back is not the full answer.
    expect(cut.data).not.toEqual(full.data);
  });

  it('says stale_data when unprojected facts are older than the threshold', async () => {
    const taskDeps = {
      db: engines.postgres.db,
      now: () => new Date('2026-11-22T15:00:00Z'),
      wakeProjector: () => {},
    };
    await inTaskUnit(taskDeps, (trx) =>
      createTask(trx, { business: 'late', name: 'not yet projected' }, taskDeps.now()),
    );
    const stale = await runQuery(
      deps,
      { metrics: ['tasks_created'], business: 'late', period: 'today' },
      open,
    );
    expect(stale.data).toEqual([{ tasks_created: 0 }]);
    expect(stale.metadata.data_as_of).toBe('2026-11-22T15:00:00.000Z');
    expect(stale.warnings).toEqual([
      expect.objectContaining({ code: 'stale_data', lag_ms: 30 * 60_000 }),
    ]);

    // Drained until the fact is in: on a shared server another file's open write transaction
    // holds it back a while (the late-commit rule is cluster-wide). Counting outbox rows against
    // ClickHouse's cannot tell here: this file's facts loaded straight into ClickHouse outnumber
    // the outbox.
    const fresh = await waitFor(
      async () => {
        await drainOutbox({
          db: engines.postgres.db,
          clickhouse: engines.clickhouse.client,
          batchSize: 1000,
        });
        const answer = await runQuery(
          deps,
          { metrics: ['tasks_created'], business: 'late', period: 'today' },
          open,
        );
        return answer.data[0]?.tasks_created === 1 ? answer : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 100 },
    );
    expect(fresh.data).toEqual([{ tasks_created: 1 }]);
    expect(fresh.warnings).toBeUndefined();
    expect(fresh.metadata.data_as_of).toBe(NOW.toISOString());
  });

  it('scopes to the caller: another business is not found, omitted means all of theirs', async () => {
    const scoped = { ...open, businesses: ['small'] };
    await expect(
      runQuery(deps, { metrics: ['tasks_created'], business: 'heavy' }, scoped),
    ).rejects.toSatisfy((error) => error instanceof AppError && error.code === 'not_found');
    const mine = await runQuery(
      deps,
      { metrics: ['tasks_created'], dimensions: ['business'], period: 'today' },
      scoped,
    );
    expect(mine.data).toEqual([{ business: 'small', tasks_created: 20 }]);
  });

  it('echoes the resolved query and describes the columns in metadata', async () => {
    const answer = await runQuery(
      deps,
      {
        metrics: ['open_tasks'],
        dimensions: ['day'],
        period: 'yesterday',
        timezone: 'Asia/Tokyo',
        business: 'small',
        filters: [{ dimension: 'project', op: 'in', values: ['p01', 'p02'] }],
      },
      open,
    );
    // 15:30Z is already 00:30 on the 23rd in Tokyo: yesterday is the local 22nd.
    expect(answer.data).toEqual([{ day: '2026-11-22', open_tasks: 2 }]);
    expect(answer.metadata).toMatchObject({
      query: {
        metrics: ['open_tasks'],
        dimensions: ['day'],
        period: {
          name: 'yesterday',
          from: '2026-11-21T15:00:00.000Z',
          to: '2026-11-22T15:00:00.000Z',
          timezone: 'Asia/Tokyo',
        },
        business: 'small',
        filters: [{ dimension: 'project', op: 'in', values: ['p01', 'p02'] }],
        order_by: [],
        limit: null,
      },
      columns: [
        { name: 'day', kind: 'dimension', type: 'date', unit: null },
        { name: 'open_tasks', kind: 'metric', type: 'integer', unit: 'tasks' },
      ],
      row_count: 1,
      total_rows: 1,
    });
    expect(typeof answer.metadata.query_id).toBe('string');
    expect(typeof answer.metadata.rows_read).toBe('number');
  });

  it('passes the caller abort signal to ClickHouse: an abandoned query stops waiting', async () => {
    const controller = new AbortController();
    const running = runQuery(
      deps,
      { metrics: ['open_tasks'], dimensions: ['day'], business: 'heavy', period: 'this_month' },
      {
        signal: controller.signal,
        businesses: null,
      },
    );
    setTimeout(() => controller.abort(), 20);
    await expect(running).rejects.toThrow(/abort/i);
  });
});
