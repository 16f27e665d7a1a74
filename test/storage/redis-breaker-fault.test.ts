import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrivateServer, privateRedis } from '../../dev-tools/private-servers.ts';
import { useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { type HttpResult, http } from '../support/http.ts';
import { projectionTotals } from '../support/projection-invariants.ts';
import { parseMetrics, sampleValue } from '../support/prometheus.ts';

// Always on real Postgres and a Redis of its own, frozen with SIGSTOP: connections stay open and
// nothing answers, the case a command timeout alone turns into a slow service.
const COMMAND_TIMEOUT_MS = 500;
const BATCH = 100;

describe('Redis hung (SIGSTOP) under rate limits and projector wake-ups', () => {
  let redis: PrivateServer;
  beforeAll(async () => {
    redis = await privateRedis();
  });
  afterAll(async () => {
    await redis?.resume?.();
    await redis?.stop();
  });
  const cairn = useCairn(() => ({
    servers: true,
    env: {
      REDIS_URL: redis.url,
      CAIRN_REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
      CAIRN_REDIS_BREAKER_FAILURES: '3',
      CAIRN_REDIS_BREAKER_COOLDOWN_MS: '5000',
    },
  }));

  const breakerState = async (breaker: string) => {
    const samples = parseMetrics((await http(cairn.url, 'GET', '/metrics')).text);
    const states = ['closed', 'open', 'half_open'] as const;
    return states.find(
      (state) => sampleValue(samples, 'cairn_circuit_breaker_state', { breaker, state }) === 1,
    );
  };

  it('costs milliseconds per request, keeps limiting, loses no fact, and uses Redis again once it answers', async () => {
    const headers = cairn.auth;
    const self = await http(cairn.url, 'GET', '/api/v1/tokens/self', { headers });
    const userKey = `${cairn.config.redisPrefix}:ratelimit:user:token:${self.body.data.id}`;
    const client = new Redis(redis.url);
    try {
      expect(Number(await client.get(userKey))).toBeGreaterThan(0);
      expect((await http(cairn.url, 'GET', '/readyz')).body.checks).toMatchObject({
        queue: 'ok',
        rate_limits: 'ok',
      });
    } finally {
      client.disconnect();
    }

    await redis.pause?.();
    // Writes and reads one after another; stop early once past the bound, so the old behaviour
    // (every request waiting out the command timeout) fails here rather than at the time limit.
    const bound = 20 * COMMAND_TIMEOUT_MS;
    const started = performance.now();
    const statuses: number[] = [];
    const created: string[] = [];
    while (statuses.length < BATCH && performance.now() - started < bound) {
      if (statuses.length % 2 === 0) {
        const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
          headers,
          body: { business: 'acme', name: `during outage ${statuses.length}` },
        });
        statuses.push(res.status);
        if (res.status === 201) created.push(res.body.data.gid);
      } else {
        const gid = created.at(-1) ?? 'none';
        statuses.push((await http(cairn.url, 'GET', `/api/v1/tasks/${gid}`, { headers })).status);
      }
    }
    const elapsed = performance.now() - started;
    expect(statuses.length, `${statuses.length} requests in ${Math.round(elapsed)} ms`).toBe(BATCH);
    expect(elapsed).toBeLessThan(bound);
    expect(new Set(statuses)).toEqual(new Set([201, 200]));

    // Still limiting, in this process's memory, with the same budget: the anonymous 60 run out.
    const anonymous: HttpResult[] = [];
    for (let n = 0; n < 70; n += 1) anonymous.push(await http(cairn.url, 'GET', '/api/v1/tasks/x'));
    const refused = anonymous.filter((res) => res.status === 429);
    expect(anonymous.filter((res) => res.status === 401).length).toBeLessThanOrEqual(60);
    expect(refused.length).toBeGreaterThanOrEqual(10);
    expect(refused[0]?.headers.get('x-ratelimit-limit')).toBe('60');
    expect(Number(refused[0]?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    // Readiness says so within the second it holds an answer for, metrics at once.
    const ready = await waitFor(
      async () => {
        const res = await http(cairn.url, 'GET', '/readyz');
        return res.status === 503 ? res : undefined;
      },
      { timeoutMs: 5_000, intervalMs: 100 },
    );
    expect(ready.body.checks).toMatchObject({ rate_limits: 'degraded', queue: 'degraded' });
    // An analytics query goes on without the result cache (its breaker opens after a few).
    for (let n = 0; n < 4; n += 1) {
      const query = await http(cairn.url, 'POST', '/api/v1/query', {
        headers,
        body: { metrics: ['tasks_created'], period: 'all_time' },
      });
      expect(query.status).toBe(200);
    }
    expect(await breakerState('redis_query_cache')).not.toBe('closed');
    expect(await breakerState('redis_rate_limits')).not.toBe('closed');
    expect(await breakerState('redis_queue')).not.toBe('closed');

    await redis.resume?.();
    // Readiness probes are the breakers' trial calls once the cool-down has passed.
    await waitFor(async () => (await http(cairn.url, 'GET', '/readyz')).status === 200, {
      timeoutMs: 30_000,
      intervalMs: 200,
    });
    expect(await breakerState('redis_rate_limits')).toBe('closed');
    expect(await breakerState('redis_queue')).toBe('closed');
    expect(await breakerState('redis_query_cache')).toBe('closed');

    // Redis counts again: one request adds one to the token's shared counter.
    const back = new Redis(redis.url);
    try {
      const before = Number(await back.get(userKey));
      expect((await http(cairn.url, 'GET', '/api/v1/tasks/none', { headers })).status).toBe(404);
      expect(Number(await back.get(userKey))).toBe(before + 1);
    } finally {
      back.disconnect();
    }

    // Every fact written while wake-ups were skipped reaches ClickHouse, once.
    const clickhouse = cairn.engines.clickhouse.client;
    await waitFor(
      async () => {
        const totals = await projectionTotals(cairn.db, clickhouse);
        return totals.outbox > 0 && totals.rows === totals.outbox;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const totals = await projectionTotals(cairn.db, clickhouse);
    expect(totals.distinct).toBe(totals.outbox);
    expect(totals.clickhouse).toEqual(totals.postgres);
    expect(totals.postgres['acme/task_created']).toBe(created.length);
  }, 120_000);
});
