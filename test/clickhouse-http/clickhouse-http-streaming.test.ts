// The ClickHouse stand-in (dev-tools/clickhouse-http.ts) while statements run: large answers
// streamed rather than held, KILL QUERY, a client that gives up, time limits, failures after the
// headers, and settings that last one request although chDB keeps them for its session.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { type ClickHouseClient, createClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type SpawnedEndpoint,
  spawnClickHouseHttp,
} from '../../dev-tools/clickhouse-http/spawn.ts';
import { type ClickHouse, openClickHouse } from '../../libs/storage/clickhouse.ts';
import { tempDir, waitFor } from '../support/engines.ts';

const rss = (pid: number): number =>
  Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024;

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('the statement succeeded');
    },
    (error: { code?: string; type?: string }) => ({ code: error.code, type: error.type }),
  );

const ENDLESS = 'SELECT number FROM system.numbers';

describe('ClickHouse HTTP stand-in, while statements run', () => {
  let endpoint: SpawnedEndpoint;
  let client: ClickHouseClient;
  let inProcess: ClickHouse;
  const dirs: string[] = [];
  const freshDir = async () => {
    dirs.push(await tempDir());
    return `${dirs.at(-1)}/ch`;
  };
  beforeAll(async () => {
    endpoint = await spawnClickHouseHttp({ dataDir: await freshDir() });
    client = createClient({ url: endpoint.url, request_timeout: 120_000 });
    inProcess = await openClickHouse({ dataDir: await freshDir() });
  });
  afterAll(async () => {
    await client?.close();
    await inProcess?.close();
    await endpoint?.stop();
    for (const made of dirs) fs.rmSync(made, { recursive: true, force: true });
  });

  const one = async (
    query: string,
    options: Parameters<ClickHouseClient['query']>[0] = { query },
  ) =>
    (
      (await (await client.query({ format: 'JSONEachRow', ...options, query })).json()) as unknown[]
    )[0];
  const kill = async (queryId: string, mode = 'ASYNC') =>
    (
      await client.query({
        query: `KILL QUERY WHERE query_id = '${queryId}' ${mode}`,
        format: 'JSONEachRow',
      })
    ).json<{ kill_status: string; query_id: string }>();

  it('streams a large answer to a slow reader without holding it', {
    timeout: 120_000,
  }, async () => {
    // chDB's own working set grows with its blocks (65,409 rows by default, hundreds of MB at
    // this width); small blocks leave what the endpoint itself holds to be seen.
    const before = rss(endpoint.pid);
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rss(endpoint.pid));
    }, 20);
    let rows = 0;
    let bytes = 0;
    try {
      const result = await client.query({
        query: "SELECT number, repeat('x', 200) AS pad FROM numbers(2000000)",
        format: 'TabSeparated',
        clickhouse_settings: { max_block_size: '8192' },
      });
      for await (const batch of result.stream()) {
        for (const row of batch as Array<{ text: string }>) {
          rows += 1;
          bytes += row.text.length + 1;
        }
        // Slower than chDB writes: what the endpoint would buffer, it would buffer here.
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    } finally {
      clearInterval(sampler);
    }
    expect(rows).toBe(2_000_000);
    expect(bytes).toBeGreaterThan(400_000_000);
    // Measured 70 MiB idle, 103 MiB loaded (chDB's query, the socket buffers), the same for 1M
    // rows as for 2M: what grows with the answer is what holding it would take, 398 MiB.
    expect(peak - before, 'growth of the endpoint while streaming').toBeLessThan(bytes / 2);
  });

  it('stops a streaming SELECT on KILL QUERY, in the middle of its answer', async () => {
    const queryId = randomUUID();
    const result = await client.query({
      query: ENDLESS,
      format: 'TabSeparated',
      query_id: queryId,
    });
    let rows = 0;
    let killing: ReturnType<typeof kill> | undefined;
    // The reader goes on reading meanwhile, as a client whose KILL comes from elsewhere.
    const reading = (async () => {
      for await (const batch of result.stream()) {
        rows += (batch as unknown[]).length;
        if (rows > 200_000) killing ??= kill(queryId, 'SYNC');
      }
    })();
    expect(await failure(reading)).toEqual({ code: '394', type: 'QUERY_WAS_CANCELLED' });
    expect(await killing).toEqual([
      expect.objectContaining({ kill_status: 'finished', query_id: queryId }),
    ]);
    expect(await kill(queryId)).toEqual([]);
    expect(await one('SELECT 1 AS one')).toEqual({ one: 1 });
  });

  it('drops a statement still waiting for the engine on KILL QUERY', async () => {
    const holder = randomUUID();
    const waiting = randomUUID();
    // Nobody reads this answer: the statement holds the engine, and the next one waits.
    const held = await client.query({ query: ENDLESS, format: 'TabSeparated', query_id: holder });
    const queued = failure(one('SELECT 42 AS answer', { query: '', query_id: waiting }));
    const killed = await waitFor(async () => {
      const rows = await kill(waiting);
      return rows.length > 0 ? rows : undefined;
    });
    expect(killed).toEqual([
      expect.objectContaining({ kill_status: 'waiting', query_id: waiting }),
    ]);
    expect(await queued).toEqual({ code: '394', type: 'QUERY_WAS_CANCELLED' });
    expect(await kill(holder)).toEqual([
      expect.objectContaining({ kill_status: 'waiting', query_id: holder }),
    ]);
    await waitFor(async () => (await kill(holder, 'TEST')).length === 0);
    held.close();
    expect(await one('SELECT 2 AS two')).toEqual({ two: 2 });
  });

  it('stops the statement of a client that gives up', async () => {
    // Slow and quiet (10 rows each tenth of a second): no headers yet when the client aborts.
    const slow =
      'SELECT number, sleepEachRow(0.01) FROM numbers(100000) SETTINGS max_block_size = 10';
    const aborted = randomUUID();
    const controller = new AbortController();
    const asked = client.query({ query: slow, query_id: aborted, abort_signal: controller.signal });
    await waitFor(async () => (await kill(aborted, 'TEST')).length > 0);
    controller.abort();
    await expect(asked).rejects.toThrow('aborted');
    // It would run for 1,000 s: it is gone, and the engine answers others.
    await waitFor(async () => (await kill(aborted, 'TEST')).length === 0, { timeoutMs: 20_000 });
    expect(await one('SELECT 3 AS three')).toEqual({ three: 3 });
    // After the headers the client's way to give up is closing the answer.
    const closed = randomUUID();
    const result = await client.query({ query: ENDLESS, format: 'TabSeparated', query_id: closed });
    for await (const _ of result.stream()) break;
    result.close();
    await waitFor(async () => (await kill(closed, 'TEST')).length === 0, { timeoutMs: 20_000 });
    expect(await one('SELECT 5 AS five')).toEqual({ five: 5 });
  });

  it('holds a statement to max_execution_time, as chDB in process does', async () => {
    const query = 'SELECT sum(number) AS total FROM numbers(1000000000000)';
    const clickhouse_settings = { max_execution_time: 1, timeout_overflow_mode: 'throw' as const };
    const [http, chdb] = await Promise.all([
      failure(client.query({ query, clickhouse_settings })),
      failure(inProcess.client.query({ query, clickhouse_settings })),
    ]);
    expect(http).toEqual(chdb);
    expect(http).toEqual({ code: '159', type: 'TIMEOUT_EXCEEDED' });
    // 'break' (how Cairn runs analytics) answers with what was computed in time: no row or
    // one partial sum, whichever the engine had reached (the same engine, a timing apart), in
    // the same columns, never an error.
    const breaking = { max_execution_time: 1, timeout_overflow_mode: 'break' as const };
    const answers = await Promise.all(
      [client, inProcess.client].map(async (on) => {
        const { data, meta } = await (
          await on.query({ query, clickhouse_settings: breaking, format: 'JSON' })
        ).json<{ total: number }>();
        return { data, meta };
      }),
    );
    const [httpBreak, chdbBreak] = answers;
    expect(httpBreak?.meta).toEqual(chdbBreak?.meta);
    for (const answer of answers) {
      expect(answer.data.length).toBeLessThanOrEqual(1);
      for (const row of answer.data) expect(Object.keys(row)).toEqual(['total']);
    }
  });

  it('fails a statement after its headers the way the client reads a server failing', async () => {
    const query = `SELECT number, repeat('x', 100) AS pad, throwIf(number = 300000, 'boom') AS t
      FROM numbers(400000) SETTINGS max_threads = 1`;
    const result = await client.query({ query, format: 'TabSeparated' });
    // Past the first MiB: the answer had begun (status 200) when the statement failed.
    expect(result.response_headers['x-clickhouse-exception-tag']).toMatch(/^[0-9a-z]{16}$/);
    let rows = 0;
    const reading = (async () => {
      for await (const batch of result.stream()) rows += (batch as unknown[]).length;
    })();
    const http = await failure(reading);
    const chdb = await failure(inProcess.client.query({ query, format: 'TabSeparated' }));
    expect(http).toEqual(chdb);
    expect(http).toEqual({ code: '395', type: 'FUNCTION_THROW_IF_VALUE_IS_NON_ZERO' });
    expect(rows).toBeGreaterThan(0);
    expect(await one('SELECT 4 AS four')).toEqual({ four: 4 });
  });

  it("keeps each request's settings, parameters and database to that request", async () => {
    const probe = `SELECT getSetting('max_threads') AS threads, getSetting('max_execution_time') AS limit,
      getSetting('allow_introspection_functions') AS introspection, currentDatabase() AS db`;
    const baseline = (await one(probe)) as Record<string, unknown>;
    expect(baseline).toMatchObject({ introspection: true, db: 'default' });
    expect(
      await one(probe, {
        query: probe,
        clickhouse_settings: {
          max_threads: 1,
          max_execution_time: 7,
          allow_introspection_functions: 0,
        },
      }),
    ).toMatchObject({ threads: 1, limit: 7, introspection: false });
    expect(await one(probe)).toEqual(baseline);
    await client.command({ query: 'SET max_threads = 1' });
    await client.command({ query: 'CREATE DATABASE IF NOT EXISTS other' });
    await client.command({ query: 'USE other' });
    expect(await one(probe)).toEqual(baseline);
    const inOther = createClient({ url: endpoint.url, database: 'other' });
    try {
      expect(await (await inOther.query({ query: probe, format: 'JSONEachRow' })).json()).toEqual([
        { ...baseline, db: 'other' },
      ]);
    } finally {
      await inOther.close();
    }
    expect(await one(probe)).toEqual(baseline);
    expect(
      await one('SELECT {x:String} AS x', { query: '', query_params: { x: 'kept?' } }),
    ).toEqual({
      x: 'kept?',
    });
    expect(await failure(one('SELECT {x:String} AS x'))).toEqual({
      code: '456',
      type: 'UNKNOWN_QUERY_PARAMETER',
    });
  });

  it('answers many clients at once, each with its own settings and parameters', async () => {
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        one("SELECT getSetting('max_threads') AS threads, {i:UInt32} AS i", {
          query: '',
          query_params: { i },
          clickhouse_settings: { max_threads: (i % 3) + 1 },
        }),
      ),
    );
    expect(answers).toEqual(Array.from({ length: 24 }, (_, i) => ({ threads: (i % 3) + 1, i })));
  });

  // Last: it stops the endpoint.
  it('closes chDB and exits 0 on SIGTERM, stopping a statement still streaming', async () => {
    const result = await client.query({ query: ENDLESS, format: 'TabSeparated' });
    // Settled as it happens: the reading fails while the endpoint is still stopping.
    const reading = (async () => {
      for await (const _ of result.stream()) {
        // reads on until the endpoint goes
      }
    })().then(
      () => 'ended',
      (error: Error) => error,
    );
    await endpoint.stop();
    expect(endpoint.child.exitCode).toBe(0);
    expect(await reading).toBeInstanceOf(Error);
  });
});
