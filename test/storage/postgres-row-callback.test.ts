import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendWithCallback } from '../../libs/storage/postgres-row-callback.ts';
import type { Send } from '../../libs/storage/postgres-send.ts';
import { createTestDatabase, type TestDatabase } from '../support/engines.ts';
import { type WireProxy, wireProxy } from '../support/wire-proxy.ts';

/**
 * The bottom layer alone, over a plain pg client: statements as Kysely sends them go through,
 * and what would go around the layers above it (a caller's callback, a cursor) never reaches
 * the server. A proxy counts what the client writes. That rows die young this way is
 * test/storage/pg-row-promotion.test.ts's.
 */
describe('the row-callback layer on a Postgres server', () => {
  let database: TestDatabase;
  let proxy: WireProxy;
  let client: pg.Client;
  let send: Send;

  beforeAll(async () => {
    database = await createTestDatabase();
    proxy = await wireProxy(database.url);
    client = new pg.Client({ connectionString: proxy.url });
    await client.connect();
    send = sendWithCallback(client);
  });
  afterAll(async () => {
    await client?.end();
    await proxy?.close();
    await database?.drop();
  });

  it("answers text and bound values with pg's result, and a named statement too", async () => {
    expect(await send(['select $1::int + 1 as n', [41]])).toMatchObject({ rows: [{ n: 42 }] });
    expect(
      await send([{ name: 'row-callback-probe', text: 'select $1::text as t', values: ['x'] }]),
    ).toMatchObject({ rows: [{ t: 'x' }] });
  });

  it("rejects with the server's error, and the connection goes on", async () => {
    await expect(send(['select 1 / $1::int', [0]])).rejects.toMatchObject({ code: '22012' });
    expect(await send(['select 2 as two'])).toMatchObject({ rows: [{ two: 2 }] });
  });

  it("refuses a caller's callback and a cursor unsent", async () => {
    const written = proxy.writes();
    const callback = () => {};
    await expect(send(['select 3', callback])).rejects.toThrow(TypeError);
    await expect(send(['select 3', [], callback])).rejects.toThrow(TypeError);
    await expect(send([new pg.Query('select 3')])).rejects.toThrow(
      'Statements go through Kysely: text and values, no callback or cursor',
    );
    expect(proxy.writes()).toBe(written);
    expect(await send(['select 4 as four'])).toMatchObject({ rows: [{ four: 4 }] });
  });
});
