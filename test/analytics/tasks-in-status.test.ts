// Tasks in each status at the end of each bucket, the worked example of docs/analytics.md: a
// task moving open → in_progress → completed across days, a cancelled one counted under
// cancelled, a deleted one counted nowhere once deleted. Every source must agree: facts both ways
// (summed changes alone, replayed histories beside ages) and the rollups' summed changes.
import { describe, expect, it } from 'vitest';
import type { QueryRequest } from '../../libs/analytics/parse/query-parser.ts';
import { prepareQuery, runQuery } from '../../libs/analytics/query.service.ts';
import { migrateClickHouse, openClickHouse } from '../../libs/storage/clickhouse.ts';
import { createTask, deleteTask, updateTask } from '../../libs/tasks/task.service.ts';
import type { TaskStatus } from '../../libs/tasks/task-status.ts';
import { analyticsDeps, projectAll } from '../support/analytics.ts';
import { tempDir, useMigratedPostgres } from '../support/engines.ts';

const BUSINESS = 'flow-states';
const MASTER = { kind: 'master' } as const;
const NOW = new Date('2026-11-20T12:00:00Z');
const at = (day: number, hour: number) => new Date(Date.UTC(2026, 10, day, hour));

/** The cumulative flow of the example, one row per day and status with tasks in it. */
const BY_DAY = [
  { day: '2026-11-02', status: 'open', tasks_in_status: 3, open_tasks: 3 },
  { day: '2026-11-03', status: 'cancelled', tasks_in_status: 1, open_tasks: 0 },
  { day: '2026-11-03', status: 'in_progress', tasks_in_status: 1, open_tasks: 1 },
  { day: '2026-11-03', status: 'open', tasks_in_status: 2, open_tasks: 2 },
  { day: '2026-11-04', status: 'cancelled', tasks_in_status: 1, open_tasks: 0 },
  { day: '2026-11-04', status: 'completed', tasks_in_status: 1, open_tasks: 0 },
  { day: '2026-11-04', status: 'in_progress', tasks_in_status: 1, open_tasks: 1 },
  { day: '2026-11-04', status: 'open', tasks_in_status: 1, open_tasks: 1 },
];

describe('tasks in each status at the end of each bucket', () => {
  const scratch = useMigratedPostgres();
  const write = <T>(work: (trx: Parameters<typeof createTask>[0]) => Promise<T>) =>
    scratch.pg.db.transaction().execute(work);
  const create = (when: Date, status?: 'in_progress') =>
    write((trx) => createTask(trx, { business: BUSINESS, name: 't', status }, when));
  const move = (gid: string, status: TaskStatus, when: Date) =>
    write((trx) => updateTask(trx, gid, { status }, MASTER, when));

  it('answers the worked example by day and status, and in total', {
    timeout: 180_000,
  }, async () => {
    const ch = await openClickHouse({ dataDir: `${await tempDir()}/ch` });
    try {
      await migrateClickHouse(ch.client);
      await create(at(2, 9));
      const worked = await create(at(2, 10));
      const dropped = await create(at(2, 11));
      const gone = await create(at(3, 9));
      await move(worked.gid, 'in_progress', at(3, 11));
      await move(dropped.gid, 'cancelled', at(3, 12));
      await move(worked.gid, 'completed', at(4, 8));
      await write((trx) => deleteTask(trx, gone.gid, MASTER, at(4, 9)));
      await create(at(4, 21), 'in_progress');
      await projectAll({ postgres: scratch.pg, clickhouse: ch });
      const deps = analyticsDeps({ clickhouse: ch, postgres: scratch.pg }, { now: () => NOW });
      const answered = new Set<string>();
      /** The answer of every source the planner finds exact: all alike, facts' returned. */
      const ask = async (metrics: string[], dimensions: string[]) => {
        const request = {
          metrics,
          dimensions,
          date_range: ['2026-11-02', '2026-11-04'],
          timezone: 'UTC',
        } as QueryRequest;
        const { sources } = await prepareQuery(deps, request, [BUSINESS], NOW);
        const key = (row: Record<string, unknown>) => `${row.day} ${row.status}`;
        const answers = [];
        for (const source of sources) {
          const answer = await runQuery(deps, request, {
            signal: new AbortController().signal,
            businesses: [BUSINESS],
            source,
          });
          expect(answer.metadata.source).toBe(source);
          answered.add(source);
          answers.push(answer.data.sort((a, b) => key(a).localeCompare(key(b))));
        }
        for (const answer of answers.slice(1)) expect(answer).toEqual(answers[0]);
        return answers[0] as Record<string, unknown>[];
      };
      expect(await ask(['tasks_in_status', 'open_tasks'], ['day', 'status'])).toEqual(BY_DAY);
      // Beside ages every task's history is replayed instead: the same counts.
      const replayed = await ask(
        ['tasks_in_status', 'open_tasks', 'avg_age_hours'],
        ['day', 'status'],
      );
      expect(replayed.map(({ avg_age_hours: _, ...row }) => row)).toEqual(BY_DAY);
      // Ages stay over the open tasks alone: Tuesday's two open ones are 39 and 15 hours old.
      expect(replayed.find((row) => row.day === '2026-11-03' && row.status === 'open')).toEqual(
        expect.objectContaining({ avg_age_hours: 27 }),
      );
      expect(replayed.find((row) => row.status === 'completed')?.avg_age_hours).toBeNull();
      expect(await ask(['tasks_in_status'], [])).toEqual([{ tasks_in_status: 4 }]);
      expect(await ask(['tasks_in_status', 'avg_age_hours'], [])).toEqual([
        // The period's end: the open ones are 63 and 3 hours old.
        { tasks_in_status: 4, avg_age_hours: 33 },
      ]);
      // Rollups keep the changes of every status: the daily and quarter-hour ones answer UTC days.
      expect([...answered].sort()).toEqual([
        'facts',
        'rollup_business_blocked_15m',
        'rollup_business_day',
        'rollup_labels_day',
        'rollup_projects_blocked_day',
      ]);
    } finally {
      await ch.close();
    }
  });
});
