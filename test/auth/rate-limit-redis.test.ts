import { type ChildProcess, spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../dev-tools/private-servers.ts';
import { useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { type HttpResult, http } from '../support/http.ts';

// Always on real Postgres and Redis: sharing a budget across instances is a Redis matter.
const remaining = (res: HttpResult) => Number(res.headers.get('x-ratelimit-remaining'));

describe('two instances on one Redis', () => {
  const a = useCairn({ servers: true, rateLimits: { user: 4 } });
  const b = useCairn(() => ({ config: a.config, rateLimits: { user: 4 } }));

  it('share one anonymous budget of 60', async () => {
    for (let n = 1; n <= 60; n += 1) {
      const res = await http((n % 2 ? a : b).url, 'GET', '/api/v1/tasks/x');
      expect(res.status).toBe(401);
      expect(remaining(res)).toBe(60 - n);
    }
    expect((await http(a.url, 'GET', '/api/v1/tasks/x')).status).toBe(429);
    expect((await http(b.url, 'GET', '/api/v1/tasks/x')).status).toBe(429);
  });

  it('share one budget per token', async () => {
    const headers = a.auth;
    const statuses: number[] = [];
    for (const instance of [a, b, a, b, b]) {
      statuses.push((await http(instance.url, 'GET', '/api/v1/tasks/x', { headers })).status);
    }
    expect(statuses).toEqual([404, 404, 404, 404, 429]);
  });
});

/** A throwaway Redis of our own: the machine's shared one must never be stopped. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => null });
  probe.on('error', () => {});
  await waitFor(() =>
    probe.connect().then(
      () => true,
      () => false,
    ),
  );
  probe.disconnect();
  return child;
}

async function stopRedis(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

describe('Redis stopped mid-run', () => {
  let redis: ChildProcess;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    redis = await startRedis(port);
  });
  afterAll(async () => {
    if (redis.exitCode === null) await stopRedis(redis);
  });
  const cairn = useCairn(() => ({
    servers: true,
    env: { REDIS_URL: `redis://127.0.0.1:${port}` },
  }));

  it('keeps answering without 500s and goes back to Redis once it returns', async () => {
    const headers = cairn.auth;
    const round = () =>
      Promise.all([
        http(cairn.url, 'GET', '/api/v1/tasks/x'),
        http(cairn.url, 'GET', '/api/v1/tasks/x', { headers }),
        http(cairn.url, 'POST', '/api/v1/query', { headers, body: { metrics: ['nope'] } }),
      ]);
    const expectServed = (answers: HttpResult[]) => {
      expect(answers.map((res) => res.status)).toEqual([401, 404, 422]);
      for (const res of answers) expect(res.headers.get('x-ratelimit-limit')).not.toBeNull();
    };
    expectServed(await round());
    const client = new Redis(port, '127.0.0.1');
    const prefix = `${cairn.config.redisPrefix}:ratelimit:`;
    expect((await client.keys(`${prefix}*`)).length).toBeGreaterThan(0);
    client.disconnect();

    await stopRedis(redis);
    for (let n = 0; n < 5; n += 1) expectServed(await round());

    redis = await startRedis(port);
    const back = new Redis(port, '127.0.0.1');
    await waitFor(async () => {
      expectServed(await round());
      return (await back.keys(`${prefix}*`)).length > 0;
    });
    back.disconnect();
  });
});
