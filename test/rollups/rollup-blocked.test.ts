// blocked_tasks from rollup_projects_blocked_day: each write records which tasks it blocked or
// unblocked (its own and its dependents), and the rollup sums those changes; facts projected
// before the write side recorded them get theirs from a replay of the facts at backfill.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { QueryRequest } from '../../libs/analytics/parse/query-parser.ts';
import { runQuery } from '../../libs/analytics/query.service.ts';
import { generateFacts } from '../../libs/demo/fact-generator.ts';
import { backfillRollups } from '../../libs/projection/rollup-backfill.ts';
import { RollupBuilds, rollupsNeedingBackfill } from '../../libs/projection/rollup-builds.ts';
import {
  type ClickHouse,
  migrateClickHouse,
  openClickHouse,
} from '../../libs/storage/clickhouse.ts';
import { addDependencies, removeDependency } from '../../libs/tasks/dependency.service.ts';
import { createTask, deleteTask, updateTask } from '../../libs/tasks/task.service.ts';
import { analyticsDeps, projectAll } from '../support/analytics.ts';
import { tempDir, useMigratedPostgres } from '../support/engines.ts';
import { expectRollupsMatchFacts } from '../support/projection-invariants.ts';

const BUSINESS = 'blocking';
const MASTER = { kind: 'master' } as const;
const NOW = new Date(Date.UTC(2026, 10, 20, 12));
const at = (day: number, hour = 9) => new Date(Date.UTC(2026, 10, day, hour));

interface Change {
  project: string | null;
  assignee: string | null;
  status: string;
  change: number;
}

describe('blocked_tasks from the blocked changes each write records', () => {
  const scratch = useMigratedPostgres();
  const db = () => scratch.pg.db;
  const write = <T>(work: (trx: Parameters<typeof createTask>[0]) => Promise<T>) =>
    db().transaction().execute(work);
  const create = async (day: number, project: string, hour = 9) =>
    (
      await write((trx) =>
        createTask(trx, { business: BUSINESS, name: project, project }, at(day, hour)),
      )
    ).gid;
  const update = (gid: string, day: number, input: Parameters<typeof updateTask>[2], hour = 15) =>
    write((trx) => updateTask(trx, gid, input, MASTER, at(day, hour)));
  const link = (gid: string, dependencies: string[], day: number, hour = 10) =>
    write((trx) => addDependencies(trx, gid, dependencies, MASTER, at(day, hour)));
  const unlink = (gid: string, dependency: string, day: number) =>
    write((trx) => removeDependency(trx, gid, dependency, MASTER, at(day, 16)));
  const remove = (gid: string, day: number) =>
    write((trx) => deleteTask(trx, gid, MASTER, at(day, 17)));

  /** Every blocked change recorded since `sinceId`, as (kind, task, changes) per fact. */
  async function recorded(sinceId: number) {
    const { rows } = await sql<{
      kind: string;
      task_gid: string;
      payload: Record<string, unknown>;
    }>`
      select kind, task_gid, payload from outbox where id > ${sinceId} order by id`.execute(db());
    return rows.map((row) => ({
      kind: row.kind,
      task: row.task_gid,
      changes: row.payload.blocked_changes as Change[],
    }));
  }
  const lastId = async () =>
    Number(
      (await sql<{ id: string }>`select coalesce(max(id), 0) as id from outbox`.execute(db()))
        .rows[0]?.id,
    );

  it('records its own and its dependents’ blocked changes on one fact of each write', async () => {
    const a = await create(1, 'alpha');
    const b = await create(1, 'alpha');
    const c = await create(1, 'beta');
    const start = await lastId();
    await link(c, [a, b], 2);
    await update(a, 3, { status: 'completed' });
    await update(b, 4, { status: 'cancelled' });
    await update(a, 5, { status: 'open' });
    await update(c, 6, { project: 'gamma', status: 'in_progress' });
    await update(c, 6, { name: 'renamed' });
    await remove(a, 7);
    const facts = await recorded(start);
    const blocked = (project: string, status: string, change: number): Change => ({
      project,
      assignee: null,
      status,
      change,
    });
    expect(facts).toEqual([
      // Two edges in one write: the change rides on the first fact, the other has none.
      { kind: 'dependency_added', task: c, changes: [blocked('beta', 'open', 1)] },
      { kind: 'dependency_added', task: c, changes: [] },
      // b is still open: c stays blocked.
      { kind: 'task_updated', task: a, changes: [] },
      { kind: 'task_completed', task: a, changes: [] },
      { kind: 'task_updated', task: b, changes: [blocked('beta', 'open', -1)] },
      { kind: 'task_updated', task: a, changes: [blocked('beta', 'open', 1)] },
      // Blocked throughout, under new labels.
      {
        kind: 'task_updated',
        task: c,
        changes: [blocked('beta', 'open', -1), blocked('gamma', 'in_progress', 1)],
      },
      { kind: 'task_updated', task: c, changes: [] },
      // Deleting the open dependency unblocks c: the change is on the deletion's own fact.
      { kind: 'dependency_removed', task: c, changes: [] },
      { kind: 'task_deleted', task: a, changes: [blocked('gamma', 'in_progress', -1)] },
    ]);
  });

  it('unblocks a task exactly once when its last two open dependencies close at the same time', {
    timeout: 60_000,
  }, async () => {
    for (let round = 0; round < 8; round++) {
      const a = await create(1, 'race');
      const b = await create(1, 'race');
      const c = await create(1, 'race');
      await link(c, [a, b], 1);
      const start = await lastId();
      // Each close alone sees the other dependency open; only one after the other sees it closed.
      await Promise.all([
        update(a, 2, { status: 'completed' }),
        update(b, 2, { status: 'completed' }),
      ]);
      const changes = (await recorded(start)).flatMap((fact) => fact.changes);
      expect(changes, `round ${round}`).toEqual([
        { project: 'race', assignee: null, status: 'open', change: -1 },
      ]);
    }
  });

  /** Chains, edges removed, tasks reopened, moved and deleted, across two weeks. */
  async function writeHistories(): Promise<void> {
    const base = await create(1, 'alpha');
    const chain = [base];
    for (let day = 2; day <= 12; day++) {
      const task = await create(day, day % 2 ? 'alpha' : 'beta');
      await link(task, [chain.at(-1) as string, ...(day % 3 === 0 ? [base] : [])], day);
      chain.push(task);
      if (day % 4 === 0) await update(chain[day - 3] as string, day, { status: 'completed' });
      if (day % 5 === 0) await update(task, day, { project: 'gamma', status: 'in_progress' });
    }
    await update(base, 6, { status: 'cancelled' });
    await update(base, 8, { status: 'open' });
    await unlink(chain[5] as string, chain[4] as string, 9);
    await remove(chain[7] as string, 10);
    await update(chain[2] as string, 11, { status: 'in_progress' });
  }

  async function projectHistories(ch: ClickHouse): Promise<RollupBuilds> {
    await migrateClickHouse(ch.client);
    const builds = await new RollupBuilds(ch.client, 50).start();
    expect(await rollupsNeedingBackfill(builds)).toEqual([]);
    await sql`delete from outbox`.execute(db());
    await writeHistories();
    await projectAll({ postgres: scratch.pg, clickhouse: ch }, 7);
    return builds;
  }

  const DAILY = 'rollup_projects_blocked_day';
  /** Zones off UTC midnight read the quarter-hour rollup: Tokyo (+09:00), Kolkata (+05:30). */
  const QUARTER_HOURLY = 'rollup_business_blocked_15m';
  const REQUESTS: Array<[QueryRequest, string]> = [
    [
      { metrics: ['blocked_tasks', 'open_tasks'], dimensions: ['day'], period: 'this_month' },
      DAILY,
    ],
    [{ metrics: ['blocked_tasks'], dimensions: ['project'], period: 'last_7_days' }, DAILY],
    [{ metrics: ['blocked_tasks'], dimensions: ['status', 'week'], period: 'this_month' }, DAILY],
    [{ metrics: ['blocked_tasks', 'tasks_created'], dimensions: [], period: 'all_time' }, DAILY],
    [
      {
        metrics: ['blocked_tasks'],
        dimensions: ['day'],
        period: 'this_month',
        filters: [{ dimension: 'project', op: 'neq', values: ['gamma'] }],
      },
      DAILY,
    ],
    [
      {
        metrics: ['blocked_tasks', 'open_tasks', 'completion_rate'],
        dimensions: ['week'],
        period: 'last_90_days',
        timezone: 'Asia/Tokyo',
      },
      QUARTER_HOURLY,
    ],
    [
      {
        metrics: ['blocked_tasks', 'completion_rate'],
        dimensions: ['day', 'status'],
        period: 'this_month',
        timezone: 'Asia/Kolkata',
      },
      QUARTER_HOURLY,
    ],
  ] as Array<[QueryRequest, string]>;

  /** Each request on the rollup and on facts: the same rows, and some tasks blocked. */
  async function answers(ch: ClickHouse, builds: RollupBuilds, businesses = [BUSINESS]) {
    const deps = {
      ...analyticsDeps({ clickhouse: ch, postgres: scratch.pg }, { now: () => NOW }),
      rollups: () => builds.ready(),
    };
    const out = [];
    for (const [request, source] of REQUESTS) {
      const options = { signal: new AbortController().signal, businesses };
      const rollup = await runQuery(deps, request, options);
      const facts = await runQuery(deps, request, { ...options, source: 'facts' });
      expect(rollup.metadata.source, JSON.stringify(request)).toBe(source);
      expect(rollup.data, JSON.stringify(request)).toEqual(facts.data);
      out.push(rollup.data);
    }
    for (const at of [0, 5]) {
      const blocked = (out[at] as Array<{ blocked_tasks: number }>).map((row) => row.blocked_tasks);
      expect(Math.max(...blocked)).toBeGreaterThan(1);
    }
    return out;
  }

  it('answers from the rollup as from facts, also after a backfill replays facts that carry no blocked changes', {
    timeout: 180_000,
  }, async () => {
    const ch = await openClickHouse({ dataDir: `${await tempDir()}/ch` });
    try {
      const builds = await projectHistories(ch);
      await expectRollupsMatchFacts(ch.client);
      const first = await answers(ch, builds);
      const rows = async () =>
        (
          await ch.client.query({
            query: `SELECT project, status, toString(slot) AS slot, sum(blocked_change) AS n
              FROM rollup_projects_blocked_day GROUP BY project, status, slot HAVING n != 0
              ORDER BY project, status, slot`,
            format: 'JSONEachRow',
          })
        ).json();
      const kept = await rows();
      expect(kept.length).toBeGreaterThan(5);

      // As an installation from before blocked changes were recorded holds its facts.
      await ch.client.command({
        query: `ALTER TABLE facts UPDATE blocked_known = 0, blocked_project = [],
          blocked_assignee = [], blocked_status = [], blocked_change = [] WHERE 1`,
        clickhouse_settings: { mutations_sync: '2' },
      });
      await backfillRollups({ db: db(), clickhouse: ch.client, builds });
      expect(await rows()).toEqual(kept);
      expect(await answers(ch, builds)).toEqual(first);
      await builds.close();
    } finally {
      await ch.close();
    }
  });

  it('works out the blocked changes of demo facts, which carry none', {
    timeout: 180_000,
  }, async () => {
    const ch = await openClickHouse({ dataDir: `${await tempDir()}/ch` });
    try {
      await migrateClickHouse(ch.client);
      const builds = await new RollupBuilds(ch.client, 50).start();
      await rollupsNeedingBackfill(builds);
      await generateFacts(ch.client, { facts: 20_000, seed: 3, now: NOW, businesses: 2 });
      await backfillRollups({ db: db(), clickhouse: ch.client, builds });
      await answers(ch, builds, ['biz-0', 'biz-1']);
      await builds.close();
    } finally {
      await ch.close();
    }
  });
});
