import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledShapes } from '../../libs/storage/compiled-shapes.ts';
import { openPostgres, type Postgres } from '../../libs/storage/postgres.ts';
import { findTask } from '../../libs/tasks/task.repository.ts';
import { createTask } from '../../libs/tasks/task.service.ts';
import { TASK_COLUMNS } from '../../libs/tasks/task.tables.ts';
import { useMigratedPostgres } from '../support/engines.ts';

describe('statements compiled once per shape', () => {
  const engines = useMigratedPostgres();
  // One connection, so pg_prepared_statements shows everything the statements below prepared.
  let single: Postgres;
  beforeAll(async () => {
    single = await openPostgres({ url: engines.url, poolSize: 1 });
  });
  afterAll(async () => {
    await single?.close();
  });

  interface Probe {
    gids: string[];
    business: string;
  }
  const probe = (values: (input: Probe) => unknown[]) => {
    const compiles: string[] = [];
    const statement = compiledShapes<Probe, { gid: string }>({
      shape: ({ gids }) => String(gids.length),
      compile: ({ gids, business }) => {
        compiles.push(String(gids.length));
        return engines.pg.db
          .selectFrom('tasks')
          .select('gid')
          .where('business', '=', business)
          .where('gid', 'in', gids)
          .orderBy('gid')
          .compile();
      },
      values,
    });
    return { statement, compiles };
  };

  it('compiles the first statement of a shape and reuses its text with later values', async () => {
    for (const gid of ['a1', 'a2', 'a3']) {
      await sql`insert into tasks (gid, business, name) values (${gid}, 'shapes', ${gid})`.execute(
        engines.pg.db,
      );
    }
    const { statement, compiles } = probe(({ gids, business }) => [business, ...gids]);
    const run = async (input: Probe) =>
      (await engines.pg.db.executeQuery(statement(input))).rows.map((row) => row.gid);

    expect(await run({ gids: ['a1', 'a2'], business: 'shapes' })).toEqual(['a1', 'a2']);
    expect(await run({ gids: ['a2', 'a3'], business: 'shapes' })).toEqual(['a2', 'a3']);
    expect(await run({ gids: ['a3', 'a1'], business: 'elsewhere' })).toEqual([]);
    expect(await run({ gids: ['a3'], business: 'shapes' })).toEqual(['a3']);
    expect(compiles).toEqual(['2', '1']);
    expect(statement({ gids: ['x', 'y'], business: 'b' })).toMatchObject({
      parameters: ['b', 'x', 'y'],
      sql: statement({ gids: ['a1', 'a2'], business: 'shapes' }).sql,
    });
  });

  it('refuses values that do not follow the compiled statement, before anything is sent', () => {
    const { statement } = probe(({ gids, business }) => [...gids, business]);
    expect(() => statement({ gids: ['a1'], business: 'shapes' })).toThrow(
      /values\(\) does not follow the compiled statement of shape 1/,
    );
    // Nothing was kept: the same shape is checked again, and fails again.
    expect(() => statement({ gids: ['a2'], business: 'shapes' })).toThrow(/shape 1/);
  });

  it('creates tasks with one fact and with two through one prepared statement per shape', async () => {
    const now = new Date('2026-11-26T10:00:00.000Z');
    const open = await createTask(
      single.db,
      { business: 'shapes', name: 'open one', project: 'p', due_on: '2026-12-01' },
      now,
    );
    const again = await createTask(single.db, { business: 'shapes', name: 'open two' }, now);
    const done = await createTask(
      single.db,
      { business: 'shapes', name: 'done', assignee: 'ann', status: 'completed' },
      now,
    );
    for (const task of [open, again, done])
      expect(await findTask(single.db, task.gid)).toEqual(task);
    expect(open).toMatchObject({
      name: 'open one',
      project: 'p',
      assignee: null,
      status: 'open',
      due_on: '2026-12-01',
      created_at: now,
      completed_at: null,
      created_project: 'p',
      version: 1,
    });
    expect(again).toMatchObject({ name: 'open two', project: null, due_on: null });
    expect(done).toMatchObject({ status: 'completed', completed_at: now, first_completed_at: now });

    const { rows: facts } = await sql<{
      task_gid: string;
      kind: string;
      payload: { name: string };
    }>`
      select task_gid, kind, payload from outbox where business = 'shapes' order by id`.execute(
      single.db,
    );
    expect(facts.map((fact) => [fact.task_gid, fact.kind, fact.payload.name])).toEqual([
      [open.gid, 'task_created', 'open one'],
      [again.gid, 'task_created', 'open two'],
      [done.gid, 'task_created', 'done'],
      [done.gid, 'task_completed', 'done'],
    ]);

    const { rows: prepared } = await sql<{ statement: string }>`
      select statement from pg_prepared_statements
      where statement like '%insert into "tasks"%'`.execute(single.db);
    expect(prepared).toHaveLength(2);
  });

  it('names every column of the tasks table', async () => {
    const { rows } = await sql<{ column_name: string }>`
      select column_name from information_schema.columns
      where table_schema = current_schema() and table_name = 'tasks'`.execute(engines.pg.db);
    expect(rows.map((row) => row.column_name).sort()).toEqual([...TASK_COLUMNS].sort());
  });
});
