// completion_rate from rollup_projects_blocked_day: each first completion is credited to its task's
// creation (slot and labels), from what the write side records or, for completions projected
// before it did, from what the backfill works out of the facts.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { QueryRequest } from '../../libs/analytics/parse/query-parser.ts';
import { runQuery } from '../../libs/analytics/query.service.ts';
import { backfillRollups } from '../../libs/projection/rollup-backfill.ts';
import { RollupBuilds, rollupsNeedingBackfill } from '../../libs/projection/rollup-builds.ts';
import {
  type ClickHouse,
  migrateClickHouse,
  openClickHouse,
} from '../../libs/storage/clickhouse.ts';
import { createTask, updateTask } from '../../libs/tasks/task.service.ts';
import { analyticsDeps, projectAll } from '../support/analytics.ts';
import { tempDir, useMigratedPostgres } from '../support/engines.ts';
import { expectRollupsMatchFacts } from '../support/projection-invariants.ts';

const BUSINESS = 'completions';
const MASTER = { kind: 'master' } as const;
// Histories end before this; state "now" and the periods are read here.
const NOW = new Date(Date.UTC(2026, 10, 20, 12));
const at = (day: number, hour = 9) => new Date(Date.UTC(2026, 10, day, hour));

describe('completions credited to their creation in rollup_projects_blocked_day', () => {
  const scratch = useMigratedPostgres();
  const write = <T>(work: (trx: Parameters<typeof createTask>[0]) => Promise<T>) =>
    scratch.pg.db.transaction().execute(work);
  const create = (day: number, project: string, status?: 'completed') =>
    write((trx) =>
      createTask(trx, { business: BUSINESS, name: project, project, status }, at(day)),
    );
  const update = (gid: string, day: number, input: Parameters<typeof updateTask>[2]) =>
    write((trx) => updateTask(trx, gid, input, MASTER, at(day, 15)));

  /** Histories with moves between projects, reopenings and completions across days. */
  async function writeHistories(): Promise<void> {
    const moved = await create(2, 'alpha');
    await update(moved.gid, 2, { project: 'beta', assignee: 'bob' });
    await update(moved.gid, 3, { status: 'completed' });
    const reopened = await create(4, 'alpha');
    await update(reopened.gid, 4, { status: 'completed' });
    await update(reopened.gid, 5, { status: 'open', project: 'gamma' });
    await update(reopened.gid, 6, { status: 'completed' });
    await create(6, 'beta', 'completed');
    for (let day = 1; day <= 12; day++) {
      const task = await create(day, day % 2 ? 'alpha' : 'beta');
      if (day % 3 !== 0) await update(task.gid, day + (day % 4), { status: 'completed' });
    }
  }

  /** A fresh ClickHouse holding exactly the histories, every rollup complete. */
  async function projectHistories(ch: ClickHouse): Promise<RollupBuilds> {
    await migrateClickHouse(ch.client);
    const builds = await new RollupBuilds(ch.client, 50).start();
    // Facts are empty: every rollup starts complete, fed by its view from here on.
    expect(await rollupsNeedingBackfill(builds)).toEqual([]);
    await sql`delete from outbox`.execute(scratch.pg.db);
    await writeHistories();
    // Small batches: creations and their completions land in separate parts of the rollups.
    await projectAll({ postgres: scratch.pg, clickhouse: ch }, 9);
    return builds;
  }

  it('completion facts name the creation labels, and only the first completion is first', async () => {
    const task = await create(1, 'alpha');
    await update(task.gid, 1, { project: 'beta', status: 'in_progress' });
    await update(task.gid, 2, { status: 'completed' });
    await update(task.gid, 3, { status: 'open' });
    await update(task.gid, 4, { status: 'completed', assignee: 'cy' });
    const { rows } = await sql<{ payload: Record<string, unknown> }>`
      select payload from outbox where task_gid = ${task.gid} and kind = 'task_completed'
      order by id`.execute(scratch.pg.db);
    expect(rows.map((row) => row.payload)).toMatchObject([
      {
        project: 'beta',
        created_project: 'alpha',
        created_assignee: null,
        created_status: 'open',
        first_completion: true,
      },
      {
        project: 'beta',
        assignee: 'cy',
        created_project: 'alpha',
        created_status: 'open',
        first_completion: false,
      },
    ]);
  });

  it('answers completion_rate from the rollup as from facts, also after a backfill works out completions projected without their creation labels', {
    timeout: 180_000,
  }, async () => {
    const ch = await openClickHouse({ dataDir: `${await tempDir()}/ch` });
    try {
      const builds = await projectHistories(ch);
      const deps = {
        ...analyticsDeps({ clickhouse: ch, postgres: scratch.pg }, { now: () => NOW }),
        rollups: () => builds.ready(),
      };
      const requests: QueryRequest[] = [
        { metrics: ['completion_rate', 'tasks_created'], dimensions: ['project'] },
        { metrics: ['completion_rate', 'p90_cycle_time_hours'], dimensions: ['day'] },
        { metrics: ['completion_rate'], dimensions: ['status', 'week'] },
        { metrics: ['completion_rate'], dimensions: [] },
      ].map((request) => ({ ...request, period: 'this_month' }) as QueryRequest);
      const answers = async () => {
        const out = [];
        for (const request of requests) {
          const options = { signal: new AbortController().signal, businesses: [BUSINESS] };
          const rollup = await runQuery(deps, request, options);
          const facts = await runQuery(deps, request, { ...options, source: 'facts' });
          expect(rollup.metadata.source).toBe('rollup_projects_blocked_day');
          expect(rollup.data).toEqual(facts.data);
          out.push(rollup.data);
        }
        return out;
      };
      const completedBy = async () => {
        const result = await ch.client.query({
          query: `SELECT project, status, toString(slot) AS slot, sumMap(completed_by) AS done
            FROM rollup_projects_blocked_day GROUP BY project, status, slot HAVING notEmpty(done.1)
            ORDER BY project, status, slot`,
          format: 'JSONEachRow',
        });
        return result.json();
      };
      const first = await answers();
      // Moved and reopened tasks count under the project they were created in, once.
      expect(first[0]).toContainEqual({
        project: 'alpha',
        completion_rate: 6 / 8,
        tasks_created: 8,
      });
      const credited = await completedBy();
      expect(credited.length).toBeGreaterThan(5);

      // As an installation from before completions named their creation leaves them.
      await ch.client.command({
        query: `ALTER TABLE facts UPDATE created_project = '', created_assignee = '',
          created_status = '', first_completion = 0 WHERE kind = 'task_completed'`,
        clickhouse_settings: { mutations_sync: '2' },
      });
      await backfillRollups({ db: scratch.pg.db, clickhouse: ch.client, builds });
      expect(await completedBy()).toEqual(credited);
      expect(await answers()).toEqual(first);
      await builds.close();
    } finally {
      await ch.close();
    }
  });

  it('keeps every rollup equal to its view over facts as completions arrive', {
    timeout: 120_000,
  }, async () => {
    const ch = await openClickHouse({ dataDir: `${await tempDir()}/ch` });
    try {
      const builds = await projectHistories(ch);
      await builds.close();
      await expectRollupsMatchFacts(ch.client);
    } finally {
      await ch.close();
    }
  });
});
