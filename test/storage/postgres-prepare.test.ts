import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type Postgres } from '../../libs/storage/postgres.ts';
import { createTestDatabase, type TestDatabase } from '../support/engines.ts';

// Statements with parameters run as named prepared statements on a server connection. One
// connection per pool and none shared beside it (a statement that once ran slowly would go to
// the pool instead), so pg_prepared_statements shows exactly what that connection holds.
describe('prepared statements on a Postgres server', () => {
  let database: TestDatabase;
  let prepared: Postgres;
  let unprepared: Postgres;

  beforeAll(async () => {
    database = await createTestDatabase();
    prepared = await openPostgres({ url: database.url, poolSize: 1, sharedConnections: 0 });
    unprepared = await openPostgres({
      url: database.url,
      poolSize: 1,
      sharedConnections: 0,
      prepare: false,
    });
    await sql`create table probe (id int primary key, label text not null)`.execute(prepared.db);
    await sql`insert into probe values (1, 'one'), (2, 'two')`.execute(prepared.db);
  });
  afterAll(async () => {
    await prepared?.close();
    await unprepared?.close();
    await database?.drop();
  });

  const held = async (pg: Postgres): Promise<{ name: string; statement: string }[]> => {
    const { rows } = await sql<{ name: string; statement: string }>`
      select name, statement from pg_prepared_statements order by prepare_time`.execute(pg.db);
    return rows;
  };

  it('prepares a statement with parameters once and reuses it', async () => {
    const label = (id: number) =>
      sql<{ label: string }>`select label from probe where id = ${id}`.execute(prepared.db);
    expect((await label(1)).rows).toEqual([{ label: 'one' }]);
    expect((await label(2)).rows).toEqual([{ label: 'two' }]);
    const statements = (await held(prepared)).filter((s) => s.statement.includes('from probe'));
    expect(statements).toHaveLength(1);
    expect(statements[0]?.name).toMatch(/^cairn_\d+$/);
  });

  it('prepares nothing when turned off', async () => {
    await sql`select label from probe where id = ${1}`.execute(unprepared.db);
    expect(await held(unprepared)).toEqual([]);
  });

  it('keeps a star select or returning list unnamed, so it survives a migration that adds a column', async () => {
    const row = () => sql`select p.* from probe p where p.id = ${1}`.execute(prepared.db);
    const listed = () =>
      sql`select p.id, p.label from probe p where p.id = ${1}`.execute(prepared.db);
    await row();
    await listed();
    await sql`alter table probe add column extra int`.execute(prepared.db);
    expect((await row()).rows).toEqual([{ id: 1, label: 'one', extra: null }]);
    expect((await listed()).rows).toEqual([{ id: 1, label: 'one' }]);
    expect(
      (
        await sql`update probe set label = ${'uno'} where id = ${1} returning *`.execute(
          prepared.db,
        )
      ).rows,
    ).toEqual([{ id: 1, label: 'uno', extra: null }]);
    await sql`alter table probe add column more int`.execute(prepared.db);
    expect(
      (
        await sql`update probe set label = ${'one'} where id = ${1} returning *`.execute(
          prepared.db,
        )
      ).rows,
    ).toEqual([{ id: 1, label: 'one', extra: null, more: null }]);
    const names = (await held(prepared)).map((s) => s.statement);
    expect(names.some((text) => text.includes('p.*') || text.includes('returning *'))).toBe(false);
    expect(names.some((text) => text.includes('p.id, p.label'))).toBe(true);
  });

  it('reports a statement that fails to parse each time, and the connection stays usable', async () => {
    const broken = () => sql`selec label from probe where id = ${1}`.execute(prepared.db);
    await expect(broken()).rejects.toThrow(/syntax error/);
    await expect(broken()).rejects.toThrow(/syntax error/);
    const divide = (by: number) =>
      sql<{ q: number }>`select 10 / ${by}::int as q`.execute(prepared.db);
    await expect(divide(0)).rejects.toThrow(/division by zero/);
    expect((await divide(5)).rows).toEqual([{ q: 2 }]);
  });

  it('runs a prepared statement inside a transaction that rolls back, then outside it', async () => {
    const insert = (id: number) => sql`insert into probe (id, label) values (${id}, ${'t'})`;
    await expect(
      prepared.db.transaction().execute(async (trx) => {
        await insert(10).execute(trx);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await insert(11).execute(prepared.db);
    const { rows } = await sql<{ id: number }>`
      select id from probe where id >= ${10} order by id`.execute(prepared.db);
    expect(rows).toEqual([{ id: 11 }]);
  });
});
