import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { withBeginCoalescing } from '../../libs/storage/postgres-begin-coalescing.ts';
import { sendWithCallback } from '../../libs/storage/postgres-row-callback.ts';
import { type Send, wireOf } from '../../libs/storage/postgres-send.ts';
import { createTestDatabase, type TestDatabase } from '../support/engines.ts';
import { type WireProxy, wireProxy } from '../support/wire-proxy.ts';

/**
 * The BEGIN-coalescing layer alone, over pg's own call, on a pipelined client: a proxy counts
 * what the client writes, so the round trip saved is seen, not assumed.
 */
describe('BEGIN coalescing on a Postgres server', () => {
  let database: TestDatabase;
  let proxy: WireProxy;
  let client: pg.Client;
  let send: Send;

  beforeAll(async () => {
    database = await createTestDatabase();
    proxy = await wireProxy(database.url);
    const setup = new pg.Client({ connectionString: database.url });
    await setup.connect();
    await setup.query('create table ledger (id int primary key)');
    await setup.end();
  });
  beforeEach(async () => {
    client = new pg.Client({ connectionString: proxy.url, pipeline: true });
    await client.connect();
    send = withBeginCoalescing(sendWithCallback(client), () => wireOf(client));
  });
  afterEach(async () => {
    await client.end();
  });
  afterAll(async () => {
    await proxy?.close();
    await database?.drop();
  });

  const ids = async (): Promise<number[]> => {
    const answer = (await send(['select id from ledger order by id'])) as pg.QueryResult;
    return answer.rows.map((row) => row.id);
  };

  it('answers BEGIN unsent, and writes it with the first statement in one write', async () => {
    const before = proxy.writes();
    expect(await send(['begin'])).toMatchObject({ command: 'BEGIN' });
    expect(proxy.writes()).toBe(before);
    await send(['insert into ledger values ($1)', [1]]);
    expect(proxy.writes()).toBe(before + 1);
    // Inside a transaction now() is its start, earlier than this statement's own time.
    const answer = (await send([
      'select now() = statement_timestamp() as fresh',
    ])) as pg.QueryResult;
    expect(answer.rows).toEqual([{ fresh: false }]);
    await send(['commit']);
    expect(await ids()).toEqual([1]);
  });

  it('keeps the transaction: a rollback undoes the statement sent with BEGIN', async () => {
    await send(['start transaction isolation level repeatable read']);
    await send(['insert into ledger values ($1)', [2]]);
    const answer = (await send(['show transaction_isolation'])) as pg.QueryResult;
    expect(answer.rows).toEqual([{ transaction_isolation: 'repeatable read' }]);
    await send(['rollback']);
    expect(await ids()).toEqual([1]);
  });

  it("reports a failed BEGIN's own error on the statement sent with it", async () => {
    await send(['start transaction isolation level whenever']);
    await expect(send(['select $1::int as n', [1]])).rejects.toThrow(/syntax error/);
    expect(await ids()).toEqual([1]);
  });
});
