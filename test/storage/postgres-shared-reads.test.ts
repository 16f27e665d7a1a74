import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type Postgres } from '../../libs/storage/postgres.ts';
import { createTestDatabase, type TestDatabase, waitFor } from '../support/engines.ts';

const backend = async (db: Postgres['db']): Promise<number> =>
  (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid;

/**
 * Statements outside a transaction share pipelined connections; a transaction keeps a pool
 * connection of its own. Which server process answered is asked of the server itself.
 */
describe('statements outside a transaction on a Postgres server', () => {
  let database: TestDatabase;
  let shared: Postgres;
  let pooled: Postgres;

  beforeAll(async () => {
    database = await createTestDatabase();
    shared = await openPostgres({ url: database.url, sharedConnections: 1 });
    pooled = await openPostgres({ url: database.url, sharedConnections: 0 });
    await sql`create table ledger (id int primary key, note text not null)`.execute(shared.db);
  });
  afterAll(async () => {
    await shared?.close();
    await pooled?.close();
    await database?.drop();
  });

  it('run concurrently on one server process, where the pool spreads them over several', async () => {
    const concurrent = (db: Postgres['db']) =>
      Promise.all(
        Array.from({ length: 12 }, () =>
          sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.005)`.execute(db),
        ),
      );
    const sharedPids = new Set((await concurrent(shared.db)).map((r) => r.rows[0]!.pid));
    const pooledPids = new Set((await concurrent(pooled.db)).map((r) => r.rows[0]!.pid));
    expect(sharedPids.size).toBe(1);
    expect(pooledPids.size).toBeGreaterThan(1);
  });

  it('give a transaction its own connection, the same for each of its statements', async () => {
    const outside = await backend(shared.db);
    const inside = await shared.db.transaction().execute(async (trx) => {
      await sql`set local application_name = 'inside'`.execute(trx);
      const first = await backend(trx);
      // A statement outside meanwhile does not land in the transaction.
      const meanwhile = await sql<{
        name: string;
      }>`select current_setting('application_name') as name`.execute(shared.db);
      const second = await backend(trx);
      return { first, second, meanwhile: meanwhile.rows[0]!.name };
    });
    expect(inside.first).toBe(inside.second);
    expect(inside.first).not.toBe(outside);
    expect(inside.meanwhile).not.toBe('inside');
  });

  it('keep a failed transaction to itself: its rollback leaves nothing behind', async () => {
    const failing = shared.db.transaction().execute(async (trx) => {
      await sql`insert into ledger values (${1}, ${'rolled back'})`.execute(trx);
      await sql`insert into ledger values (${1}, ${'duplicate'})`.execute(trx);
    });
    await expect(failing).rejects.toThrow(/duplicate key/);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from ledger`.execute(
      shared.db,
    );
    expect(rows[0]!.n).toBe(0);
  });

  it('fail one by one: an error among pipelined statements leaves the others answered', async () => {
    const [good, bad, after] = await Promise.allSettled([
      sql<{ n: number }>`select ${1}::int as n`.execute(shared.db),
      sql`select 1 / ${0}::int`.execute(shared.db),
      sql<{ n: number }>`select ${3}::int as n`.execute(shared.db),
    ]);
    expect(good.status === 'fulfilled' && good.value.rows[0]!.n).toBe(1);
    expect(bad.status === 'rejected' && String(bad.reason)).toMatch(/division by zero/);
    expect(after.status === 'fulfilled' && after.value.rows[0]!.n).toBe(3);
  });

  it('do not wait behind a slow statement: later ones take a pool connection', async () => {
    let slowFinished = false;
    const slow = sql`select pg_sleep(3)`.execute(shared.db).then(() => {
      slowFinished = true;
    });
    // The sleeping statement's own backend, as the server sees it: asking through the adapter
    // could itself land on the pool on a busy machine (a statement slow the last time does).
    const slowPid = await waitFor(async () => {
      const { rows } = await sql<{ pid: number }>`select pid from pg_stat_activity
        where query = 'select pg_sleep(3)' and state = 'active'`.execute(pooled.db);
      return rows[0]?.pid;
    });
    // Past the point where the shared connection counts as held up by the slow statement.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const pid = await backend(shared.db);
    expect(slowFinished).toBe(false);
    expect(pid).not.toBe(slowPid);
    await slow;
  });

  it('send a statement that was slow the last time to the pool, and back once it is fast', async () => {
    const timed = (seconds: number) =>
      sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(${seconds})`
        .execute(shared.db)
        .then((result) => result.rows[0]!.pid);
    // A text never run before goes to the shared connection.
    const sharedPid = await timed(0.05);
    // Slow the last time: both go to the pool, side by side rather than one behind the other.
    const [first, second] = await Promise.all([timed(0), timed(0)]);
    expect(first).not.toBe(sharedPid);
    expect(second).not.toBe(sharedPid);
    expect(first).not.toBe(second);
    // Fast on the pool: the next one shares the connection again (a busy machine can make a
    // trivial statement take 20 ms now and then; it is then tried again).
    let back = false;
    for (let attempt = 0; attempt < 20 && !back; attempt += 1)
      back = (await timed(0)) === sharedPid;
    expect(back).toBe(true);
  });

  it('replace a shared connection whose server process ended', async () => {
    const before = await backend(shared.db);
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      await admin.query('select pg_terminate_backend($1)', [before]);
    } finally {
      await admin.end();
    }
    // The end reaches the client as its socket closes; a statement sent before that fails
    // with the connection, and every later one goes to its replacement.
    let after: number | undefined;
    for (let attempt = 0; attempt < 50 && after === undefined; attempt += 1) {
      after = await backend(shared.db).catch(async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return undefined;
      });
    }
    expect(after).toBeDefined();
    expect(after).not.toBe(before);
  });
});
