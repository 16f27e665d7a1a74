import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomSecret } from '../support/auth.ts';
import { useCairn } from '../support/cairn.ts';
import { tempDir } from '../support/engines.ts';
import { http } from '../support/http.ts';
import { type ServerProcess, spawnServer } from '../support/server-process.ts';

const MASTER_KEY = randomSecret();
const QUERY = { metrics: ['tasks_created'], dimensions: ['business'], period: 'last_30_days' };

/**
 * Two API instances on one Postgres and one Redis. Each keeps its own embedded ClickHouse here,
 * and only the first holds any facts: an answer the second gives from the shared cache is
 * recognisable because its own engine would have found nothing.
 */
describe('result cache shared through Redis by two instances', () => {
  const first = useCairn({ servers: true, env: { CAIRN_MASTER_KEY: MASTER_KEY } });
  let second: ServerProcess;
  beforeAll(async () => {
    second = await spawnServer({
      DATABASE_URL: first.config.databaseUrl as string,
      REDIS_URL: first.config.redisUrl as string,
      CAIRN_REDIS_PREFIX: first.config.redisPrefix,
      CAIRN_MASTER_KEY: MASTER_KEY,
      LOG_LEVEL: 'silent',
      DATA_DIR: await tempDir(),
    });
    await first.engines.clickhouse.client.insert({
      table: 'facts',
      values: [1, 2, 3].map((id) => ({
        fact_id: id,
        kind: 'task_created',
        business: 'acme',
        task_gid: `t${id}`,
        occurred_at: new Date().toISOString(),
        status: 'open',
        task_created_at: new Date().toISOString(),
      })),
      format: 'JSONEachRow',
    });
  }, 120_000);
  afterAll(async () => {
    second?.child.kill('SIGTERM');
    await second?.exited;
  });

  const query = (url: string, headers: Record<string, string> = {}) =>
    http(url, 'POST', '/api/v1/query', { body: QUERY, headers: { ...first.auth, ...headers } });

  it('answers on the second instance from what the first computed', async () => {
    const computed = await query(first.url);
    expect(computed.body.metadata.cache).toBe('miss');
    expect(computed.body.data).toEqual([{ business: 'acme', tasks_created: 3 }]);

    const shared = await query(second.url);
    expect(shared.status).toBe(200);
    expect(shared.body.metadata.cache).toBe('hit');
    expect(shared.body.data).toEqual(computed.body.data);

    // The second instance's own engine has no facts: the hit really came through Redis.
    const own = await query(second.url, { 'Cache-Control': 'no-cache' });
    expect(own.body.metadata.cache).toBe('miss');
    expect(own.body.data).toEqual([]);
  });
});
