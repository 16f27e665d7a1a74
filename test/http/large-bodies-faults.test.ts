import { describe, expect, it } from 'vitest';
import { unlimited, useCairn } from '../support/cairn.ts';
import { type HttpResult, http } from '../support/http.ts';

/**
 * The thread that checks a large body may stall or die; the request is answered regardless,
 * with a 503 problem once the deadline passes or the thread is gone, and the pool goes on.
 */
describe('large bodies when the checking thread fails', () => {
  const cairn = useCairn({
    rateLimits: unlimited(),
    businesses: ['lf'],
    bodyChecks: {
      entry: new URL('../support/faulty-body-worker.ts', import.meta.url),
      // Generous: a fresh thread starts inside the deadline, slowly on a busy machine.
      timeoutMs: 8_000,
      threads: 1,
    },
  });
  const padding = ' '.repeat(100_000);
  const create = (name: string) =>
    http(cairn.url, 'POST', '/api/v1/tasks', {
      headers: { ...cairn.auth, 'content-type': 'application/json' },
      raw: `{"business":"lf","name":"${name}"${padding}}`,
    });
  const expectUnavailable = (res: HttpResult) => {
    expect(res.status, res.text).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.body).toMatchObject({ status: 503, instance: '/api/v1/tasks' });
  };

  it('answers a body whose check stalls with a 503 problem after the deadline', {
    timeout: 60_000,
  }, async () => {
    expectUnavailable(await create('stall'));
    const next = await create('next one');
    expect(next.status, next.text).toBe(201);
  });

  it('answers a body whose checking thread crashes with a 503 problem', {
    timeout: 60_000,
  }, async () => {
    expectUnavailable(await create('crash'));
    const next = await create('and the next');
    expect(next.status, next.text).toBe(201);
  });

  it('answers the bodies queued behind a stalled one too', { timeout: 60_000 }, async () => {
    const [stalled, ...behind] = await Promise.all([
      create('stall'),
      create('queued 1'),
      create('queued 2'),
    ]);
    expectUnavailable(stalled as HttpResult);
    // Those behind wait in the same queue under the same deadline: each is answered, either
    // checked by a fresh thread or refused with a 503 once the deadline has passed.
    for (const res of behind) expect([201, 503], res.text).toContain(res.status);
    const tasks = await cairn.db.selectFrom('tasks').select('name').execute();
    expect(tasks.map((task) => task.name)).not.toContain('stall');
  });
});
