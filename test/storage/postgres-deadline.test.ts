import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_DEFAULTS } from '../../libs/config/config.ts';
import { openPostgres } from '../../libs/storage/postgres.ts';
import { withReadDeadline } from '../../libs/storage/postgres-deadline.ts';
import { sendWithCallback } from '../../libs/storage/postgres-row-callback.ts';
import { wireOf } from '../../libs/storage/postgres-send.ts';
import { createTestDatabase, type TestDatabase, waitFor } from '../support/engines.ts';
import { type WireProxy, wireProxy } from '../support/wire-proxy.ts';

/**
 * The client's read deadline, for a server that answers nothing: a proxy holds back whatever
 * the server sends, so the server itself never times the statement out. Without the deadline
 * each of these statements would wait for as long as the proxy stays frozen.
 */
describe('the read deadline on a Postgres server', () => {
  let database: TestDatabase;
  let proxy: WireProxy;

  beforeAll(async () => {
    database = await createTestDatabase();
    proxy = await wireProxy(database.url);
  });
  afterAll(async () => {
    proxy?.thaw();
    await proxy?.close();
    await database?.drop();
  });

  it('gives up on a silent server, destroys the connection and refuses what follows unsent', async () => {
    const client = new pg.Client({ connectionString: proxy.url });
    client.on('error', () => {});
    await client.connect();
    const send = withReadDeadline(sendWithCallback(client), 200, () => wireOf(client));
    expect(await send(['select 1 as one'])).toMatchObject({ rows: [{ one: 1 }] });
    proxy.freeze();
    try {
      await expect(send(['select 2 as two'])).rejects.toThrow('Query read timeout');
      await waitFor(async () => proxy.open() === 0);
      const written = proxy.writes();
      await expect(send(['select 3 as three'])).rejects.toThrow('Query read timeout');
      expect(proxy.writes()).toBe(written);
    } finally {
      proxy.thaw();
    }
  });

  it('bounds every statement of a server client by the statement timeout and its grace', async () => {
    const pg = await openPostgres({
      url: proxy.url,
      poolSize: 1,
      timeouts: { ...POSTGRES_DEFAULTS.timeouts, statementMs: 200 },
    });
    try {
      await sql`select 1`.execute(pg.db);
      proxy.freeze();
      try {
        await expect(sql`select 2`.execute(pg.db)).rejects.toThrow('Query read timeout');
        await expect(
          pg.db.transaction().execute((trx) => sql`select ${3}::int`.execute(trx)),
        ).rejects.toThrow(/timeout/);
      } finally {
        proxy.thaw();
      }
      // The connections given up on are gone; new ones serve the next statements.
      await waitFor(async () => {
        try {
          await sql`select 4`.execute(pg.db);
          return true;
        } catch {
          return false;
        }
      });
    } finally {
      await pg.close();
    }
  });
});
