import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_PREPARED_STATEMENTS,
  withPreparedNames,
} from '../../libs/storage/postgres-prepared-names.ts';
import { sendWithCallback } from '../../libs/storage/postgres-row-callback.ts';
import type { Send } from '../../libs/storage/postgres-send.ts';
import { createTestDatabase, type TestDatabase } from '../support/engines.ts';

/**
 * The prepared-names layer alone, over pg's own call: pg_prepared_statements shows what each
 * connection holds. Names are handed out once per process (this file's module), so the
 * expectations below go in order.
 */
describe('prepared statement names on a Postgres server', () => {
  let database: TestDatabase;
  const clients: pg.Client[] = [];

  const connect = async (): Promise<Send> => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    clients.push(client);
    return withPreparedNames(sendWithCallback(client));
  };
  const held = async (send: Send): Promise<Map<string, string>> => {
    const answer = (await send([
      'select name, statement from pg_prepared_statements',
    ])) as pg.QueryResult<{ name: string; statement: string }>;
    return new Map(answer.rows.map((row) => [row.statement, row.name]));
  };
  const rows = async (send: Send, text: string, values?: unknown[]) =>
    ((await send(values ? [text, values] : [text])) as pg.QueryResult).rows;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    for (const client of clients) await client.end();
    await database?.drop();
  });

  it('names a statement with values, and every connection prepares it under the same name', async () => {
    const one = await connect();
    const two = await connect();
    const text = 'select $1::int + 1 as n';
    expect(await rows(one, text, [1])).toEqual([{ n: 2 }]);
    expect(await rows(one, text, [2])).toEqual([{ n: 3 }]);
    expect(await rows(two, text, [3])).toEqual([{ n: 4 }]);
    const name = (await held(one)).get(text);
    expect(name).toMatch(/^cairn_\d+$/);
    expect((await held(two)).get(text)).toBe(name);
    expect((await held(one)).size).toBe(1);
  });

  it('leaves unnamed a statement without values and a select list with a star', async () => {
    const send = await connect();
    expect(await rows(send, 'select 1 as n')).toEqual([{ n: 1 }]);
    expect(await rows(send, 'select t.* from (select $1::int as n) t', [5])).toEqual([{ n: 5 }]);
    expect(await rows(send, 'select count(*)::int as n from (select $1::int) t', [5])).toEqual([
      { n: 1 },
    ]);
    expect([...(await held(send)).keys()]).toEqual([
      'select count(*)::int as n from (select $1::int) t',
    ]);
  });

  it('names no more texts than its bound, and runs the rest unnamed', async () => {
    const send = await connect();
    const texts = Array.from(
      { length: MAX_PREPARED_STATEMENTS + 8 },
      (_, i) => `select $1::int - ${i} as n`,
    );
    for (const [i, text] of texts.entries()) {
      expect(await rows(send, text, [1])).toEqual([{ n: 1 - i }]);
    }
    const names = await held(send);
    // Two names went to the texts of the tests above.
    expect(names.size).toBe(MAX_PREPARED_STATEMENTS - 2);
    expect(names.has(texts.at(-1) as string)).toBe(false);
  });
});
