import net from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type Postgres } from '../libs/storage/postgres.ts';
import { createTestDatabase, type TestDatabase } from './support/engines.ts';

/**
 * A transaction's BEGIN travels with its first statement. A proxy between the client and the
 * server counts what the client writes, so the round trips are seen, not assumed.
 */
describe('a transaction on a Postgres server', () => {
  let database: TestDatabase;
  let proxy: net.Server;
  let writes = 0;
  const sockets = new Set<net.Socket>();
  let pg: Postgres;

  beforeAll(async () => {
    database = await createTestDatabase();
    const target = new URL(database.url);
    proxy = net.createServer((client) => {
      const server = net.connect(Number(target.port || 5432), target.hostname);
      sockets.add(client).add(server);
      client.on('data', (chunk) => {
        writes += 1;
        server.write(chunk);
      });
      server.on('data', (chunk) => client.write(chunk));
      const end = () => {
        client.destroy();
        server.destroy();
      };
      client.on('close', end).on('error', end);
      server.on('close', end).on('error', end);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const via = new URL(database.url);
    via.host = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
    pg = await openPostgres({ url: via.toString(), poolSize: 1 });
    await sql`create table ledger (id int primary key, note text not null)`.execute(pg.db);
  });
  afterAll(async () => {
    await pg?.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => proxy?.close(resolve));
    await database?.drop();
  });

  const count = async (): Promise<number> =>
    Number((await sql<{ n: string }>`select count(*) as n from ledger`.execute(pg.db)).rows[0]?.n);

  it('sends BEGIN with the first statement: two round trips for a one-statement transaction', async () => {
    await pg.db
      .transaction()
      .execute((trx) => sql`insert into ledger values (${0}, ${'warm'})`.execute(trx));
    const before = writes;
    for (let id = 1; id <= 20; id += 1) {
      await pg.db
        .transaction()
        .execute((trx) => sql`insert into ledger values (${id}, ${'one statement'})`.execute(trx));
    }
    // Three writes each (BEGIN, statement, COMMIT) when BEGIN waits for its own answer.
    expect(writes - before).toBeLessThanOrEqual(40);
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
      for (const socket of sockets) socket.destroy();
      await sql`select 1`.execute(trx);
    });
    await expect(dropped).rejects.toThrow();
    expect(await count()).toBe(22);
  });
});
