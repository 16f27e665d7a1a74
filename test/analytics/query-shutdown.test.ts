import { afterAll, describe, expect, it } from 'vitest';
import { migrateClickHouse, openClickHouse } from '../../libs/storage/clickhouse.ts';
import { HEAVY_QUERY, loadFacts, untilQueued } from '../support/analytics-load.ts';
import { randomSecret } from '../support/auth.ts';
import { migratedPglite, tempDir } from '../support/engines.ts';
import { type HttpResult, http } from '../support/http.ts';
import { type ServerProcess, spawnServer } from '../support/server-process.ts';

const MASTER_KEY = randomSecret();

describe('SIGTERM with analytics queries waiting on embedded engines', () => {
  let server: ServerProcess | undefined;
  afterAll(async () => {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
  });

  it('answers every waiting caller 503 with Retry-After, finishes the running query, exits 0', async () => {
    const dataDir = await tempDir();
    await migratedPglite(`${dataDir}/pg`);
    // Facts first, while no server holds the data directory (chDB: one process per directory).
    const ch = await openClickHouse({ dataDir: `${dataDir}/ch` });
    await migrateClickHouse(ch.client);
    await loadFacts(ch.client);
    await ch.close();

    server = await spawnServer({
      DATA_DIR: dataDir,
      CAIRN_MASTER_KEY: MASTER_KEY,
      CAIRN_QUERY_TIMEOUT_MS: '600000',
      CAIRN_QUERY_QUEUE_WAIT_MS: '600000',
      // The running query finishes however busy the machine is.
      CAIRN_SHUTDOWN_TIMEOUT_MS: '240000',
      LOG_LEVEL: 'silent',
    });
    const issued = await http(server.url, 'POST', '/api/v1/tokens', {
      headers: { Authorization: `Bearer ${MASTER_KEY}` },
      body: { name: 'dash', scopes: ['analytics:read'], businesses: ['biz-0', 'biz-1'] },
    });
    expect(issued.status).toBe(201);
    const headers = {
      Authorization: `Bearer ${issued.body.data.token}`,
      'Cache-Control': 'no-cache',
    };
    const url = server.url;
    const answers: Array<Promise<HttpResult>> = Array.from({ length: 6 }, (_, i) =>
      http(url, 'POST', '/api/v1/query', {
        body: { ...HEAVY_QUERY, business: `biz-${i % 2}` },
        headers,
      }),
    );
    // One running (chDB has one slot), the rest waiting: the signal comes while they wait.
    await untilQueued(url, 3);
    server.child.kill('SIGTERM');
    const results = await Promise.all(answers);
    const exit = await server.exited;

    expect(exit).toEqual({ code: 0, signal: null });
    // Every caller got an answer: the running query its data, each waiting one a 503 at once.
    const refused = results.filter((res) => res.status === 503);
    expect(refused.length).toBeGreaterThanOrEqual(3);
    expect(results.filter((res) => res.status !== 503).map((res) => res.status)).toEqual(
      Array(results.length - refused.length).fill(200),
    );
    for (const res of refused) {
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(res.body.detail).toMatch(/shutting down/);
    }
  }, 300_000);
});
