// The ClickHouse stand-in (dev-tools/clickhouse-http.ts) against chDB in process: Cairn's two
// ClickHouse adapters (libs/storage/clickhouse.ts, with a URL and without) run the same
// statements and must agree, and the endpoint must answer on the wire as a server does.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import zlib from 'node:zlib';
import { type ClickHouseClient, createClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type SpawnedEndpoint,
  spawnClickHouseHttp,
} from '../../dev-tools/clickhouse-http/spawn.ts';
import {
  BASE_SETTINGS,
  type ClickHouse,
  migrateClickHouse,
  openClickHouse,
} from '../../libs/storage/clickhouse.ts';
import { tempDir } from '../support/engines.ts';

const USER = 'cairn';
const PASSWORD = randomBytes(18).toString('base64url');

describe('ClickHouse HTTP stand-in, statement for statement against chDB in process', () => {
  let endpoint: SpawnedEndpoint;
  let overHttp: ClickHouse;
  let inProcess: ClickHouse;
  const withCredentials = (url: string) => {
    const withUser = new URL(url);
    withUser.username = USER;
    withUser.password = PASSWORD;
    return withUser.toString();
  };
  const dirs: string[] = [];
  const freshDir = async () => {
    dirs.push(await tempDir());
    return `${dirs.at(-1)}/ch`;
  };
  beforeAll(async () => {
    endpoint = await spawnClickHouseHttp({
      dataDir: await freshDir(),
      user: USER,
      password: PASSWORD,
    });
    overHttp = await openClickHouse({ url: withCredentials(endpoint.url) });
    inProcess = await openClickHouse({ dataDir: await freshDir() });
  });
  afterAll(async () => {
    await overHttp?.close();
    await inProcess?.close();
    await endpoint?.stop();
    for (const made of dirs) await fs.rm(made, { recursive: true, force: true });
  });

  /** The same call on both adapters: [over HTTP, in process]. */
  const both = <T>(run: (client: ClickHouseClient) => Promise<T>): Promise<[T, T]> =>
    Promise.all([run(overHttp.client), run(inProcess.client)]);
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error('the statement succeeded');
      },
      (error: { code?: string; type?: string; message: string }) => ({
        code: error.code,
        type: error.type,
      }),
    );
  /** A raw request (node:http: the bytes as sent, never decoded), to see what the wire carries. */
  const wire = (query: string, options: WireOptions = {}) => {
    const url = new URL(endpoint.url);
    url.searchParams.set('query', query);
    for (const [name, value] of Object.entries(options.params ?? {})) {
      url.searchParams.set(name, value);
    }
    const auth = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
    return rawRequest(url, { ...options, headers: { Authorization: auth, ...options.headers } });
  };

  it('answers in every format Cairn reads, byte for byte as chDB does', async () => {
    const query = `SELECT number AS n, toString(number * 7) AS s,
        toDateTime64('2026-01-02 03:04:05.678', 3, 'UTC') + number AS t,
        [toString(number), 'x'] AS arr, if(number % 2 = 0, NULL, 'odd') AS maybe,
        'tab\\there "quoted" \\\\ back, comma' AS tricky
      FROM numbers(5) ORDER BY n`;
    for (const format of [
      'JSONEachRow',
      'JSONCompactEachRowWithNames',
      'TabSeparatedWithNames',
      'CSVWithNames',
    ] as const) {
      const [http, chdb] = await both(async (client) =>
        (await client.query({ query, format })).text(),
      );
      expect(http, format).toBe(chdb);
      expect(http.split('\n').length, format).toBeGreaterThan(5);
    }
    const [http, chdb] = await both(async (client) => {
      const { statistics: _, ...rest } = await (await client.query({ query, format: 'JSON' })).json<
        Record<string, unknown>
      >();
      return rest;
    });
    expect(http).toEqual(chdb);
    expect(http.rows).toBe(5);
  });

  it('binds every parameter type Cairn uses, text with tabs, quotes and backslashes included', async () => {
    const tricky = 'tab\there\nnew line \'single\' "double" back\\slash \\t\\N \r é ✓';
    const query_params = {
      s: tricky,
      a: [tricky, '', "it's", 'a\\b'],
      n: null,
      nn: tricky,
      t: '2026-01-02 03:04:05.678',
      ts: ['2026-01-02 03:04:05.678', '1999-12-31 23:59:59.999'],
      u: '18446744073709551615',
      u32: 4_000_000_000,
      i: -9_007_199_254_740_993n,
      d: '2026-02-28',
      au: [1, 2, 3],
      an: ['a', null, tricky],
      id: 'three',
    };
    const query = `SELECT {s:String} AS s, {a:Array(String)} AS a, {n:Nullable(String)} AS n,
        {nn:Nullable(String)} AS nn, {t:DateTime64(3, 'UTC')} AS t,
        {ts:Array(DateTime64(3, 'UTC'))} AS ts, {u:UInt64} AS u, {u32:UInt32} AS u32,
        {i:Int64} AS i, {d:Date} AS d, {au:Array(UInt64)} AS au,
        {an:Array(Nullable(String))} AS an, {id:Identifier} AS counted
      FROM (SELECT 3 AS three)`;
    const [http, chdb] = await both(async (client) =>
      (await client.query({ query, query_params, format: 'JSONEachRow' })).text(),
    );
    expect(http).toBe(chdb);
    // 64-bit integers past 2^53 are checked in the text: JSON.parse would round them.
    expect(http).toContain('"u":18446744073709551615,');
    expect(http).toContain('"i":-9007199254740993,');
    const { u: _u, i: _i, id: _id, t: _t, ts: _ts, ...asSent } = query_params;
    expect(JSON.parse(http)).toEqual({
      ...asSent,
      u: expect.any(Number),
      i: expect.any(Number),
      t: '2026-01-02T03:04:05.678Z',
      ts: ['2026-01-02T03:04:05.678Z', '1999-12-31T23:59:59.999Z'],
      counted: 3,
    });
  });

  it('refuses a placeholder with no value, as a server does', async () => {
    const [http, chdb] = await both((client) =>
      failure(client.query({ query: 'SELECT {missing:String}', format: 'JSONEachRow' })),
    );
    expect(http).toEqual(chdb);
    expect(http).toEqual({ code: '456', type: 'UNKNOWN_QUERY_PARAMETER' });
  });

  it('drops a retried insert that carries the same deduplication token, in its views too', async () => {
    const counts = await both(async (client) => {
      await client.command({
        query: `CREATE TABLE t_dedup (id UInt64, v String) ENGINE = MergeTree ORDER BY id
          SETTINGS non_replicated_deduplication_window = 100`,
      });
      await client.command({
        query: `CREATE TABLE t_dedup_sum (n UInt64) ENGINE = SummingMergeTree ORDER BY tuple()
          SETTINGS non_replicated_deduplication_window = 100`,
      });
      await client.command({
        query:
          'CREATE MATERIALIZED VIEW t_dedup_mv TO t_dedup_sum AS SELECT count() AS n FROM t_dedup',
      });
      const batch = (from: number) =>
        Array.from({ length: 50 }, (_, i) => ({ id: from + i, v: `row ${from + i}\t'"` }));
      const summaries = [];
      for (const [token, from] of [
        ['batch-1', 0],
        ['batch-1', 0],
        ['batch-2', 50],
      ] as const) {
        const { summary } = await client.insert({
          table: 't_dedup',
          values: batch(from),
          format: 'JSONEachRow',
          clickhouse_settings: { insert_deduplication_token: token },
        });
        summaries.push(summary);
      }
      const result = await client.query({
        query: `SELECT (SELECT count() FROM t_dedup) AS rows, (SELECT sum(n) FROM t_dedup_sum) AS counted,
          (SELECT groupArray(v) FROM (SELECT v FROM t_dedup ORDER BY id LIMIT 2)) AS first`,
        format: 'JSONEachRow',
      });
      return { rows: await result.json(), summaries };
    });
    expect(counts[0].rows).toEqual(counts[1].rows);
    expect(counts[0].rows).toEqual([
      { rows: 100, counted: 100, first: ['row 0\t\'"', 'row 1\t\'"'] },
    ]);
    // A server counts the view's rows among those written, and so does the stand-in.
    expect(counts[0].summaries[0]).toMatchObject({ written_rows: '51' });
  });

  it('runs DDL, mutations and table swaps through command, any statement through exec', async () => {
    const [http, chdb] = await both(async (client) => {
      await client.command({
        query: 'CREATE TABLE t_ddl (b String, a UInt8) ENGINE = MergeTree ORDER BY b',
      });
      await client.command({ query: "INSERT INTO t_ddl VALUES ('kept', 1), ('gone', 2)" });
      // Erasure's statement (libs/erasure), with the wait a server's mutations_sync gives.
      await client.command({
        query: 'ALTER TABLE t_ddl DELETE WHERE b = {b:String}',
        query_params: { b: 'gone' },
        clickhouse_settings: { mutations_sync: '2' },
      });
      const left = await (
        await client.query({ query: 'SELECT b FROM t_ddl', format: 'JSONEachRow' })
      ).json();
      // A rebuild's swap (libs/projection/rebuild.ts).
      await client.command({ query: 'CREATE TABLE t_ddl_next AS t_ddl' });
      await client.command({ query: "INSERT INTO t_ddl_next VALUES ('next', 4)" });
      await client.command({ query: 'EXCHANGE TABLES t_ddl AND t_ddl_next' });
      await client.command({ query: 'TRUNCATE TABLE t_ddl_next' });
      const { stream } = await client.exec({
        query: `SELECT (SELECT sum(a) FROM t_ddl), (SELECT count() FROM t_ddl_next) FORMAT TabSeparated`,
      });
      let text = '';
      for await (const chunk of stream) text += chunk;
      return { left, text };
    });
    expect(http).toEqual(chdb);
    expect(http).toEqual({ left: [{ b: 'kept' }], text: '4\t0\n' });
  });

  it('fails as chDB does, with the status and headers a server sends', async () => {
    for (const query of ['SELEC 1', 'SELECT * FROM no_such_table', 'SELECT no_such_function(1)']) {
      const [http, chdb] = await both((client) => failure(client.query({ query })));
      expect(http, query).toEqual(chdb);
    }
    const cases: Array<[string, number, string]> = [
      ['SELEC 1', 400, '62'],
      ['SELECT * FROM no_such_table', 404, '60'],
      ['SELECT throwIf(1)', 500, '395'],
    ];
    for (const [query, status, code] of cases) {
      const res = await wire(query, { method: 'POST' });
      expect(res.status, query).toBe(status);
      expect(res.headers['x-clickhouse-exception-code'], query).toBe(code);
      expect(res.text, query).toMatch(
        new RegExp(
          `^Code: ${code}\\. DB::Exception: .*\\([A-Z_]+\\) \\(version [^)]+\\)+\\n$`,
          's',
        ),
      );
    }
  });

  it('refuses a second statement and, over GET, anything that writes', async () => {
    const multi = await wire('SELECT 1; SELECT 2', { method: 'POST' });
    expect(multi.status).toBe(400);
    expect(multi.text).toContain('Multi-statements are not allowed');
    const write = await wire('CREATE TABLE t_get (a UInt8) ENGINE = Memory');
    expect(write.headers['x-clickhouse-exception-code']).toBe('164');
    const exists = await wire('EXISTS TABLE t_get');
    expect([exists.status, exists.text]).toEqual([200, '0\n']);
  });

  it('takes compressed requests and compresses answers when asked', async () => {
    const gzipClient = createClient({
      url: withCredentials(endpoint.url),
      clickhouse_settings: BASE_SETTINGS,
      compression: { request: true, response: true },
    });
    try {
      await overHttp.client.command({ query: 'CREATE TABLE t_gz (s String) ENGINE = Memory' });
      const values = Array.from({ length: 2000 }, (_, i) => ({
        s: `value ${i} ${'x'.repeat(i % 50)}`,
      }));
      await gzipClient.insert({ table: 't_gz', values, format: 'JSONEachRow' });
      const back = await gzipClient.query({ query: 'SELECT s FROM t_gz', format: 'JSONEachRow' });
      expect(back.response_headers['content-encoding']).toBe('gzip');
      expect(await back.json()).toEqual(values);
    } finally {
      await gzipClient.close();
    }
    for (const [encoding, decode] of [
      ['gzip', zlib.gunzipSync],
      ['br', zlib.brotliDecompressSync],
      ['deflate', zlib.inflateSync],
    ] as const) {
      const res = await wire('SELECT count() FROM t_gz', {
        headers: { 'Accept-Encoding': encoding },
        params: { enable_http_compression: '1' },
      });
      expect(res.headers['content-encoding']).toBe(encoding);
      expect(decode(res.body).toString()).toBe('2000\n');
    }
    const deflated = await wire('', {
      method: 'POST',
      body: zlib.deflateSync('SELECT count() FROM t_gz FORMAT TabSeparated'),
      headers: { 'Content-Encoding': 'deflate' },
    });
    expect(deflated.text).toBe('2000\n');
    const corrupt = await wire('', {
      method: 'POST',
      body: Buffer.from('not gzip'),
      headers: { 'Content-Encoding': 'gzip' },
    });
    expect(corrupt.headers['x-clickhouse-exception-code']).toBe('354');
  });

  it('echoes the query id it was given and makes one up otherwise', async () => {
    const query_id = `cairn-${randomBytes(6).toString('hex')}`;
    const result = await overHttp.client.query({ query: 'SELECT 1', query_id, format: 'JSON' });
    await result.json();
    expect(result.query_id).toBe(query_id);
    expect(result.response_headers['x-clickhouse-query-id']).toBe(query_id);
    const res = await wire('SELECT 1 FORMAT JSONEachRow');
    expect(res.headers['x-clickhouse-query-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers['x-clickhouse-format']).toBe('JSONEachRow');
    expect(res.headers['content-type']).toBe('application/json; charset=UTF-8');
    expect(res.headers['x-clickhouse-timezone']).toBeTruthy();
    expect(JSON.parse(String(res.headers['x-clickhouse-summary']))).toMatchObject({
      result_rows: '1',
    });
    expect(res.text).toBe('{"1":1}\n');
  });

  it('answers only the user it was started with (516, as a server)', async () => {
    expect((await overHttp.client.ping()).success).toBe(true);
    expect(await (await fetch(`${endpoint.url}/ping`)).text()).toBe('Ok.\n');
    const tries: Array<[string, Record<string, string>]> = [
      ['no credentials', {}],
      [
        'wrong password',
        { Authorization: `Basic ${Buffer.from(`${USER}:nope`).toString('base64')}` },
      ],
      ['wrong user', { 'X-ClickHouse-User': 'default', 'X-ClickHouse-Key': PASSWORD }],
    ];
    for (const [what, headers] of tries) {
      const res = await fetch(`${endpoint.url}/?query=SELECT%201`, { headers });
      expect(res.status, what).toBe(403);
      expect(res.headers.get('x-clickhouse-exception-code'), what).toBe('516');
      expect(await res.text(), what).toMatch(
        /^Code: 516\. DB::Exception: \w+: Authentication failed/,
      );
    }
    const byHeaders = await fetch(`${endpoint.url}/?query=SELECT%201`, {
      headers: { 'X-ClickHouse-User': USER, 'X-ClickHouse-Key': PASSWORD },
    });
    expect(await byHeaders.text()).toBe('1\n');
    const wrong = createClient({ url: endpoint.url, username: USER, password: 'nope' });
    try {
      expect(await failure(wrong.query({ query: 'SELECT 1' }))).toEqual({
        code: '516',
        type: 'AUTHENTICATION_FAILED',
      });
    } finally {
      await wrong.close();
    }
  });

  it("builds Cairn's whole schema from its migrations, as chDB in process does", async () => {
    const [httpNames, chdbNames] = await both((client) => migrateClickHouse(client));
    expect(httpNames).toEqual(chdbNames);
    const [http, chdb] = await both(async (client) =>
      (
        await client.query({
          query: `SELECT name, engine, create_table_query FROM system.tables
            WHERE database = 'default' AND name NOT LIKE 't\\_%' ORDER BY name`,
          format: 'JSONEachRow',
        })
      ).json<{ name: string }>(),
    );
    expect(http).toEqual(chdb);
    expect(http.map((table) => table.name)).toContain('facts');
    // Migrations are idempotent: a second run changes nothing and fails nothing.
    await migrateClickHouse(overHttp.client);
  });
});

interface WireOptions {
  method?: string;
  headers?: Record<string, string>;
  params?: Record<string, string>;
  body?: Buffer;
}

function rawRequest(url: URL, options: WireOptions) {
  return new Promise<{
    status: number;
    headers: http.IncomingHttpHeaders;
    body: Buffer;
    text: string;
  }>((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? 'GET', headers: options.headers });
    req.on('error', reject);
    req.on('response', async (res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString() });
    });
    req.end(options.body);
  });
}
