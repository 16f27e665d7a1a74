// Work time (a task's first move to in_progress → its completion) and blocked time (how long it
// was open with an open dependency before it): the write side records both on each completion
// fact; facts and every rollup answering flows give the same numbers, also after a backfill
// refills the rollups from facts.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { QueryRequest } from '../../libs/analytics/parse/query-parser.ts';
import { prepareQuery, runQuery } from '../../libs/analytics/query.service.ts';
import { backfillRollups } from '../../libs/projection/rollup-backfill.ts';
import { RollupBuilds, rollupsNeedingBackfill } from '../../libs/projection/rollup-builds.ts';
import { migrateClickHouse, openClickHouse } from '../../libs/storage/clickhouse.ts';
import { addDependencies } from '../../libs/tasks/dependency.service.ts';
import { createTask, updateTask } from '../../libs/tasks/task.service.ts';
import { analyticsDeps, projectAll } from '../support/analytics.ts';
import { tempDir, useMigratedPostgres } from '../support/engines.ts';
import { expectRollupsMatchFacts } from '../support/projection-invariants.ts';

const BUSINESS = 'acme';
const MASTER = { kind: 'master' } as const;
const NOW = new Date('2026-11-20T12:00:00Z');
const at = (day: number, hour: number) => new Date(Date.UTC(2026, 10, day, hour));
const WEEK = ['2026-11-02', '2026-11-08'] as const;
const WORK = [
  'avg_work_time_hours',
  'p50_work_time_hours',
  'p85_work_time_hours',
  'avg_blocked_hours',
  'flow_efficiency',
] as const;

describe('work and blocked time of completed tasks', () => {
  const scratch = useMigratedPostgres();
  const write = <T>(work: (trx: Parameters<typeof createTask>[0]) => Promise<T>) =>
    scratch.pg.db.transaction().execute(work);
  const create = (name: string, project: string) =>
    write((trx) => createTask(trx, { business: BUSINESS, name, project }, at(2, 9)));
  const move = (gid: string, when: Date, status: 'open' | 'in_progress' | 'completed') =>
    write((trx) => updateTask(trx, gid, { status }, MASTER, when));

  /**
   * The worked examples of docs/analytics.md, written in the order they happen: work times 22, 6
   * and 48 hours (C has none); C waits on B for 12 hours.
   */
  async function writeExample(): Promise<string> {
    const a = await create('A', 'alpha');
    const b = await create('B', 'beta');
    const c = await create('C', 'beta');
    const d = await create('D', 'alpha');
    await write((trx) => addDependencies(trx, c.gid, [b.gid], MASTER, at(2, 9)));
    await move(d.gid, at(2, 10), 'in_progress');
    await move(a.gid, at(2, 11), 'in_progress');
    await move(a.gid, at(2, 12), 'open');
    await move(a.gid, at(2, 14), 'in_progress');
    await move(b.gid, at(2, 15), 'in_progress');
    await move(b.gid, at(2, 21), 'completed');
    await move(a.gid, at(3, 9), 'completed');
    await move(c.gid, at(4, 9), 'completed');
    await move(d.gid, at(4, 10), 'completed');
    return c.gid;
  }

  it('answers the worked example on facts and on every rollup, and again after a backfill', {
    timeout: 240_000,
  }, async () => {
    const ch = await openClickHouse({ dataDir: `${await tempDir()}/ch` });
    try {
      await migrateClickHouse(ch.client);
      const builds = await new RollupBuilds(ch.client, 50).start();
      expect(await rollupsNeedingBackfill(builds)).toEqual([]);
      await sql`delete from outbox`.execute(scratch.pg.db);
      const c = await writeExample();
      const { rows } = await sql<{ payload: Record<string, unknown> }>`
        select payload from outbox where task_gid = ${c} and kind = 'task_completed'`.execute(
        scratch.pg.db,
      );
      expect(rows.map((row) => [row.payload.started_at, row.payload.blocked_ms])).toEqual([
        [null, 12 * 3_600_000],
      ]);
      // Small batches: completions and their work times land in separate, unmerged parts.
      await projectAll({ postgres: scratch.pg, clickhouse: ch }, 3);
      const deps = {
        ...analyticsDeps({ clickhouse: ch, postgres: scratch.pg }, { now: () => NOW }),
        rollups: () => builds.ready(),
      };
      const requests: QueryRequest[] = [
        { metrics: ['tasks_completed', ...WORK], dimensions: [] },
        { metrics: [...WORK], dimensions: ['project'] },
        { metrics: [...WORK, 'p50_cycle_time_hours'], dimensions: ['assignee', 'day'] },
        { metrics: [...WORK], dimensions: ['day'], timezone: 'Asia/Kathmandu' },
      ].map((request) => ({ timezone: 'UTC', ...request, date_range: [...WEEK] }) as QueryRequest);
      const sourcesSeen = new Set<string>();
      const answers = async () => {
        const out = [];
        for (const request of requests) {
          const { sources } = await prepareQuery(deps, request, [BUSINESS], NOW);
          const options = { signal: new AbortController().signal, businesses: [BUSINESS] };
          const facts = await runQuery(deps, request, { ...options, source: 'facts' });
          for (const source of sources) {
            const answer = await runQuery(deps, request, { ...options, source });
            expect(answer.metadata.source).toBe(source);
            expect(answer.data, `${source} ${JSON.stringify(request)}`).toEqual(facts.data);
            sourcesSeen.add(source);
          }
          out.push(facts.data);
        }
        return out;
      };
      const first = await answers();
      expect(first[0]).toEqual([
        {
          tasks_completed: 4,
          avg_work_time_hours: 76 / 3,
          p50_work_time_hours: 22,
          p85_work_time_hours: expect.closeTo(40.2, 9),
          avg_blocked_hours: 3,
          flow_efficiency: 1 - 12 / 133,
        },
      ]);
      expect(first[1]).toEqual([
        {
          project: 'alpha',
          avg_work_time_hours: 35,
          p50_work_time_hours: 35,
          p85_work_time_hours: expect.closeTo(22 + 0.85 * 26, 9),
          avg_blocked_hours: 0,
          flow_efficiency: 1,
        },
        {
          project: 'beta',
          avg_work_time_hours: 6,
          p50_work_time_hours: 6,
          p85_work_time_hours: 6,
          avg_blocked_hours: 6,
          flow_efficiency: 1 - 12 / 60,
        },
      ]);
      expect([...sourcesSeen].sort()).toEqual([
        'facts',
        'rollup_business_blocked_15m',
        'rollup_business_day',
        'rollup_labels_day',
        'rollup_projects_blocked_day',
      ]);
      await expectRollupsMatchFacts(ch.client);

      await backfillRollups({ db: scratch.pg.db, clickhouse: ch.client, builds });
      expect(await answers()).toEqual(first);
      await builds.close();
    } finally {
      await ch.close();
    }
  });
});
