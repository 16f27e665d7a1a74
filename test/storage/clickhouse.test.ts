import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ClickHouse,
  migrateClickHouse,
  openClickHouse,
} from '../../libs/storage/clickhouse.ts';
import { tempDir } from '../support/engines.ts';

describe('ClickHouse adapter (chDB through @clickhouse/client)', () => {
  let ch: ClickHouse;
  beforeAll(async () => {
    ch = await openClickHouse({
      url: process.env.CLICKHOUSE_URL,
      dataDir: `${await tempDir()}/ch`,
    });
    await migrateClickHouse(ch.client);
  });
  afterAll(async () => ch.close());

  const one = async (query: string, query_params?: Record<string, unknown>) => {
    const result = await ch.client.query({ query, query_params, format: 'JSONEachRow' });
    return (await result.json<Record<string, unknown>>())[0];
  };

  it('answers a ping and applies its DDL idempotently', async () => {
    await ch.ping();
    await migrateClickHouse(ch.client);
    expect(await one("SELECT count() AS n FROM system.tables WHERE name = 'facts'")).toEqual({
      n: 1,
    });
  });

  it('returns 64-bit integers as JSON numbers', async () => {
    expect(await one('SELECT toUInt64(42) AS n, count() AS c FROM numbers(3)')).toEqual({
      n: 42,
      c: 3,
    });
  });

  it('binds values as typed parameters, never as SQL text', async () => {
    const tricky = "x' OR 1=1 --";
    expect(await one('SELECT {v:String} AS v, length({v:String}) AS l', { v: tricky })).toEqual({
      v: tricky,
      l: tricky.length,
    });
  });

  it('starts every statement from the base settings, whatever the last one set', async () => {
    await ch.client.query({
      query: 'SELECT 1',
      clickhouse_settings: { timeout_overflow_mode: 'break', insert_deduplication_token: 'abc' },
    });
    expect(
      await one(
        "SELECT getSetting('timeout_overflow_mode') AS mode, getSetting('insert_deduplication_token') AS token",
      ),
    ).toEqual({ mode: 'throw', token: '' });
  });

  // Settings a statement asks for, read back inside that same statement.
  const settingsSeen = async (settings: Record<string, string>) => {
    const result = await ch.client.query({
      query:
        "SELECT getSetting('timeout_overflow_mode') AS mode, toString(getSetting('max_threads')) AS threads, getSetting('insert_deduplication_token') AS token",
      format: 'JSONEachRow',
      clickhouse_settings: settings,
    });
    return (await result.json<Record<string, string>>())[0];
  };

  it('gives every statement in a sequence exactly the settings it asks for', async () => {
    const threads = String((await settingsSeen({}))?.threads);
    const choices = fc.record(
      {
        timeout_overflow_mode: fc.constantFrom('throw', 'break'),
        max_threads: fc.constantFrom('1', '2', '3'),
        insert_deduplication_token: fc.constantFrom('', 'a', 'b'),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(choices, { minLength: 1, maxLength: 6 }), async (statements) => {
        for (const settings of statements) {
          expect(await settingsSeen(settings)).toEqual({
            mode: settings.timeout_overflow_mode ?? 'throw',
            // Not a base setting: it keeps whatever the session was last given.
            threads: settings.max_threads ?? expect.any(String),
            token: settings.insert_deduplication_token ?? '',
          });
        }
      }),
      { numRuns: 25 },
    );
    await settingsSeen({ max_threads: threads });
  });

  it('after a statement fails part-way through its settings, the next starts from the base', async () => {
    await settingsSeen({});
    // The override is applied before the invalid value stops the statement.
    await expect(
      ch.client.query({
        query: 'SELECT 1',
        clickhouse_settings: { timeout_overflow_mode: 'break', max_threads: 'many' as never },
      }),
    ).rejects.toThrow();
    expect(await settingsSeen({})).toMatchObject({ mode: 'throw', token: '' });
    // And a repeat of the override still reaches the engine.
    expect(await settingsSeen({ timeout_overflow_mode: 'break' })).toMatchObject({ mode: 'break' });
    expect(await settingsSeen({})).toMatchObject({ mode: 'throw' });
  });

  it('drops a retried insert that carries the same deduplication token', async () => {
    const row = (id: number) => ({
      fact_id: id,
      kind: 'task_created',
      business: 'dedup',
      task_gid: `t${id}`,
      occurred_at: '2026-11-22T10:00:00.000Z',
      project: '',
      assignee: '',
      status: 'open',
      previous_status: '',
      due_on: null,
      task_created_at: '2026-11-22T10:00:00.000Z',
      dependency_gid: '',
    });
    for (let attempt = 0; attempt < 3; attempt++) {
      await ch.client.insert({
        table: 'facts',
        values: [row(1), row(2)],
        format: 'JSONEachRow',
        clickhouse_settings: { insert_deduplication_token: 'batch-1-2' },
      });
    }
    await ch.client.insert({
      table: 'facts',
      values: [row(3)],
      format: 'JSONEachRow',
      clickhouse_settings: { insert_deduplication_token: 'batch-3-3' },
    });
    expect(
      await one("SELECT count() AS n, sum(fact_id) AS s FROM facts WHERE business = 'dedup'"),
    ).toEqual({
      n: 3,
      s: 6,
    });
  });
});
