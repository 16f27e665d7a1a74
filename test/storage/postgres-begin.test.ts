import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type Postgres } from '../../libs/storage/postgres.ts';
import { createTestDatabase, type TestDatabase } from '../support/engines.ts';
import { type WireProxy, wireProxy } from '../support/wire-proxy.ts';

/**
 * A transaction's BEGIN travels with its first statement. A proxy between the client and the
 * server counts what the client writes, so the round trips are seen, not assumed.
 */
describe('a transaction on a Postgres server', () => {
  let database: TestDatabase;
  let proxy: WireProxy;
  let pg: Postgres;

  beforeAll(async () => {
    database = await createTestDatabase();
    proxy = await wireProxy(database.url);
    pg = await openPostgres({ url: proxy.url, poolSize: 1 });
    await sql`create table ledger (id int primary key, note text not null)`.execute(pg.db);
  });
  afterAll(async () => {
    await pg?.close();
    await proxy?.close();
    await database?.drop();
  });

  const count = async (): Promise<number> =>
    Number((await sql<{ n: string }>`select count(*) as n from ledger`.execute(pg.db)).rows[0]?.n);

  it('sends BEGIN with the first statement: two round trips for a one-statement transaction', async () => {
    await pg.db
      .transaction()
      .execute((trx) => sql`insert into ledger values (${0}, ${'warm'})`.execute(trx));
    const before = proxy.writes();
    for (let id = 1; id <= 20; id += 1) {
      await pg.db
        .transaction()
        .execute((trx) => sql`insert into ledger values (${id}, ${'one statement'})`.execute(trx));
    }
    // Three writes each (BEGIN, statement, COMMIT) when BEGIN waits for its own answer.
    expect(proxy.writes() - before).toBeLessThanOrEqual(40);
    expect(await count()).toBe(21);
  });

  it('keeps the transaction: a later failure rolls back the statements before it', async () => {
    const failing = pg.db.transaction().execute(async (trx) => {
      await sql`insert into ledger values (${100}, ${'rolled back'})`.execute(trx);
      await sql`insert into ledger values (${100}, ${'duplicate'})`.execute(trx);
    });
    await expect(failing).rejects.toThrow(/duplicate key/);
    expect(await count()).toBe(21);
  });

  it('reports a first statement that fails, and the connection serves the next transaction', async () => {
    const failing = pg.db
      .transaction()
      .execute((trx) => sql`insert into ledger values (${1}, ${'taken'})`.execute(trx));
    await expect(failing).rejects.toThrow(/duplicate key/);
    await pg.db.transaction().execute(async (trx) => {
      await sql`insert into ledger values (${101}, ${'after'})`.execute(trx);
      const { rows } = await sql<{ open: boolean }>`
        select now() = statement_timestamp() as open`.execute(trx);
      // Inside a transaction now() is its start, earlier than this statement's own time.
      expect(rows[0]?.open).toBe(false);
    });
    expect(await count()).toBe(22);
  });

  it('commits nothing when the connection drops before COMMIT', async () => {
    const dropped = pg.db.transaction().execute(async (trx) => {
      await sql`insert into ledger values (${200}, ${'never committed'})`.execute(trx);
      proxy.drop();
      await sql`select 1`.execute(trx);
    });
    await expect(dropped).rejects.toThrow();
    expect(await count()).toBe(22);
  });
});
