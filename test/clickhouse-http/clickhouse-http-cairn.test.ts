// Cairn's server shape on the ClickHouse stand-in (dev-tools/clickhouse-http.ts): the
// machine's Postgres and Redis, ClickHouse over HTTP, and two Cairn processes (one in this
// process doing everything, one `CAIRN_ROLE=api` child) sharing them.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type SpawnedEndpoint,
  spawnClickHouseHttp,
} from '../../dev-tools/clickhouse-http/spawn.ts';
import { useCairn } from '../support/cairn.ts';
import { tempDir, waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';
import { type ServerProcess, spawnServer } from '../support/server-process.ts';

const MASTER_KEY = randomBytes(48).toString('base64');
const QUERY = {
  metrics: ['tasks_created', 'open_tasks'],
  dimensions: ['project'],
  period: 'today',
};

describe('Cairn with CLICKHOUSE_URL on the ClickHouse stand-in', () => {
  let endpoint: SpawnedEndpoint;
  let api: ServerProcess;
  const dirs: string[] = [];
  const freshDir = async () => {
    dirs.push(await tempDir());
    return dirs.at(-1) as string;
  };
  // After hooks run last-registered first: this one, after the in-process Cairn has closed.
  afterAll(async () => {
    api?.child.kill('SIGTERM');
    await api?.exited;
    await endpoint?.stop();
    for (const made of dirs) await fs.rm(made, { recursive: true, force: true });
  });
  const cairn = useCairn(async () => {
    endpoint = await spawnClickHouseHttp({ dataDir: `${await freshDir()}/ch` });
    return { servers: true, env: { CLICKHOUSE_URL: endpoint.url, CAIRN_MASTER_KEY: MASTER_KEY } };
  });
  beforeAll(async () => {
    api = await spawnServer({
      CAIRN_ROLE: 'api',
      DATABASE_URL: cairn.config.databaseUrl as string,
      REDIS_URL: cairn.config.redisUrl as string,
      CAIRN_REDIS_PREFIX: cairn.config.redisPrefix,
      CLICKHOUSE_URL: endpoint.url,
      CAIRN_MASTER_KEY: MASTER_KEY,
      LOG_LEVEL: 'silent',
      DATA_DIR: await freshDir(),
    });
  }, 120_000);

  it('migrated ClickHouse through the endpoint', async () => {
    expect(cairn.engines.clickhouse.kind).toBe('server');
    const tables = await (
      await cairn.engines.clickhouse.client.query({
        query: "SELECT name FROM system.tables WHERE database = 'default' ORDER BY name",
        format: 'JSONEachRow',
      })
    ).json<{ name: string }>();
    expect(tables.map((table) => table.name)).toEqual(
      expect.arrayContaining(['facts', 'rollup_business_day', 'rollup_labels_day']),
    );
  });

  it('answers a task written through the api process once the projector has it', async () => {
    const created = await http(api.url, 'POST', '/api/v1/tasks', {
      body: { business: 'acme', name: 'On the stand-in', project: 'alpha' },
      headers: cairn.auth,
    });
    expect(created.status).toBe(201);
    const answer = await waitFor(
      async () => {
        const res = await http(cairn.url, 'POST', '/api/v1/query', {
          body: QUERY,
          headers: { ...cairn.auth, 'Cache-Control': 'no-cache' },
        });
        return res.body.data?.[0]?.tasks_created === 1 ? res.body : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(answer.data).toEqual([{ project: 'alpha', tasks_created: 1, open_tasks: 1 }]);
    const fromApi = await http(api.url, 'POST', '/api/v1/query', {
      body: QUERY,
      headers: { ...cairn.auth, 'Cache-Control': 'no-cache' },
    });
    expect(fromApi.body.data).toEqual(answer.data);
    expect(fromApi.body.metadata.rows_read).toBeGreaterThan(0);
  });

  it('streams an export from the api process', async () => {
    const q = encodeURIComponent(
      JSON.stringify({ metrics: ['tasks_created'], dimensions: ['day'], period: 'last_7_days' }),
    );
    const res = await fetch(`${api.url}/api/v1/query/export?q=${q}`, {
      headers: { ...cairn.auth, Accept: 'text/csv' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const lines = (await res.text()).trim().split('\r\n');
    const today = new Date().toISOString().slice(0, 10);
    expect(lines[0]).toBe('day,tasks_created');
    expect(lines).toHaveLength(8);
    expect(lines.at(-1)).toBe(`${today},1`);
  });
});
