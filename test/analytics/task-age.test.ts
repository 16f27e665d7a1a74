// Aging work in progress: the age of the tasks open at the end of each bucket, the worked
// example of docs/analytics.md, with a completed and a deleted task that count nowhere.
import { describe, expect, it } from 'vitest';
import type { QueryRequest } from '../../libs/analytics/parse/query-parser.ts';
import { runQuery } from '../../libs/analytics/query.service.ts';
import { migrateClickHouse, openClickHouse } from '../../libs/storage/clickhouse.ts';
import { createTask, deleteTask, updateTask } from '../../libs/tasks/task.service.ts';
import { analyticsDeps, projectAll } from '../support/analytics.ts';
import { tempDir, useMigratedPostgres } from '../support/engines.ts';

const BUSINESS = 'ages';
const MASTER = { kind: 'master' } as const;
const NOW = new Date('2026-11-20T12:00:00Z');
const at = (day: number, hour: number) => new Date(Date.UTC(2026, 10, day, hour));
const AGES = ['open_tasks', 'avg_age_hours', 'p85_age_hours'] as const;

describe('ages of the tasks open at the end of each bucket', () => {
  const scratch = useMigratedPostgres();
  const write = <T>(work: (trx: Parameters<typeof createTask>[0]) => Promise<T>) =>
    scratch.pg.db.transaction().execute(work);
  const create = (when: Date, status?: 'in_progress') =>
    write((trx) => createTask(trx, { business: BUSINESS, name: 't', status }, when));

  it('answers the worked example, by day too, leaving out completed and deleted tasks', {
    timeout: 180_000,
  }, async () => {
    const ch = await openClickHouse({ dataDir: `${await tempDir()}/ch` });
    try {
      await migrateClickHouse(ch.client);
      await create(at(2, 9));
      await create(at(3, 9), 'in_progress');
      const done = await create(at(3, 10));
      await write((trx) => updateTask(trx, done.gid, { status: 'completed' }, MASTER, at(4, 8)));
      const gone = await create(at(2, 10));
      await write((trx) => deleteTask(trx, gone.gid, MASTER, at(4, 9)));
      await create(at(4, 21));
      await projectAll({ postgres: scratch.pg, clickhouse: ch });
      const deps = analyticsDeps({ clickhouse: ch, postgres: scratch.pg }, { now: () => NOW });
      const ask = async (dimensions: string[]) => {
        const request = {
          metrics: [...AGES],
          dimensions,
          date_range: ['2026-11-02', '2026-11-04'],
          timezone: 'UTC',
        } as QueryRequest;
        const answer = await runQuery(deps, request, {
          signal: new AbortController().signal,
          businesses: [BUSINESS],
        });
        expect(answer.metadata.source).toBe('facts');
        return answer.data;
      };
      expect(await ask([])).toEqual([
        { open_tasks: 3, avg_age_hours: 35, p85_age_hours: expect.closeTo(55.8, 9) },
      ]);
      expect(await ask(['day'])).toEqual([
        // Monday's end: two tasks, 15 and 14 hours old.
        {
          day: '2026-11-02',
          open_tasks: 2,
          avg_age_hours: 14.5,
          p85_age_hours: expect.closeTo(14.85, 9),
        },
        // Tuesday's end: four, 39, 38, 15 and 14 hours old.
        {
          day: '2026-11-03',
          open_tasks: 4,
          avg_age_hours: 26.5,
          p85_age_hours: expect.closeTo(38 + 0.55 * 1, 9),
        },
        {
          day: '2026-11-04',
          open_tasks: 3,
          avg_age_hours: 35,
          p85_age_hours: expect.closeTo(55.8, 9),
        },
      ]);
    } finally {
      await ch.close();
    }
  });
});
