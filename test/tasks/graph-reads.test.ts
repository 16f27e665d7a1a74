import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_WALK } from '../../libs/tasks/dependency.service.ts';
import { unlimited, useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';
import { insertFan } from '../support/task-fan.ts';

/** `GET /tasks/{gid}/critical_path` and `GET /businesses/{business}/bottlenecks` over one graph. */
describe('critical path and bottlenecks', () => {
  // Each call moves the clock on a second: creation order is strict, so ties are decided by it.
  let clock = Date.parse('2026-11-20T09:00:00Z');
  const tick = () => {
    clock += 1000;
    return new Date(clock);
  };
  const cairn = useCairn({ rateLimits: unlimited(), now: tick });
  const gid: Record<string, string> = {};
  const nameOf = (g: string) => Object.keys(gid).find((name) => gid[name] === g) ?? g;

  const create = async (name: string, extra: Record<string, unknown> = {}) => {
    const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
      body: { business: 'acme', name, ...extra },
      headers: cairn.auth,
    });
    expect(res.status, res.text).toBe(201);
    gid[name] = res.body.data.gid;
  };
  const depend = (task: string, on: string[]) =>
    http(cairn.url, 'POST', `/api/v1/tasks/${gid[task]}/dependencies`, {
      body: { dependencies: on.map((name) => gid[name]) },
      headers: cairn.auth,
    });
  const path = async (task: string) => {
    const res = await http(cairn.url, 'GET', `/api/v1/tasks/${gid[task]}/critical_path`, {
      headers: cairn.auth,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.meta.length).toBe(res.body.data.length);
    return res.body.data.map((task: { gid: string }) => nameOf(task.gid));
  };
  const ranking = async (query = '') => {
    const res = await http(cairn.url, 'GET', `/api/v1/businesses/acme/bottlenecks${query}`, {
      headers: cairn.auth,
    });
    expect(res.status, res.text).toBe(200);
    return res.body.data as Array<{
      gid: string;
      direct_count: number;
      blocked_count: number;
      overdue: boolean;
      status: string;
    }>;
  };

  beforeAll(async () => {
    // r waits on a and b; a on c; b on d. x (completed) and k (cancelled) hold nothing up, and
    // the chain under x (y → z → w) is reached only through x. A diamond t ← m1, m2 ← u.
    for (const name of ['r', 'a', 'b']) await create(name);
    await create('c', { due_on: '2026-01-01' });
    await create('d', { due_on: '2099-01-01' });
    await create('e');
    await create('x', { status: 'completed' });
    for (const name of ['y', 'z', 'w']) await create(name, { project: 'p2' });
    await create('k', { status: 'cancelled' });
    for (const name of ['t', 'm1', 'm2', 'u']) await create(name);
    for (const [task, on] of [
      ['r', ['a', 'b', 'x', 'k']],
      ['a', ['c']],
      ['b', ['d']],
      ['x', ['y']],
      ['y', ['z']],
      ['z', ['w']],
      ['m1', ['t']],
      ['m2', ['t']],
      ['u', ['m1', 'm2']],
    ] as const) {
      expect((await depend(task, [...on])).status).toBe(200);
    }
  }, 60_000);

  it('follows the longest chain of open tasks, the earliest created among equals', async () => {
    // a → c and b → d are as long: a was created first.
    expect(await path('r')).toEqual(['a', 'c']);
    expect((await depend('d', ['e'])).status).toBe(200);
    expect(await path('r')).toEqual(['b', 'd', 'e']);
    expect(await path('e')).toEqual([]);
    expect(await path('u')).toEqual(['m1', 't']);
  });

  it('lists each task with its status, due date and whether it is overdue', async () => {
    await depend('d', ['e']);
    const res = await http(cairn.url, 'GET', `/api/v1/tasks/${gid.a}/critical_path`, {
      headers: cairn.auth,
    });
    expect(res.body.data).toEqual([
      {
        gid: gid.c,
        resource_type: 'task',
        name: 'c',
        status: 'open',
        due_on: '2026-01-01',
        overdue: true,
      },
    ]);
    const [b] = (
      await http(cairn.url, 'GET', `/api/v1/tasks/${gid.r}/critical_path`, { headers: cairn.auth })
    ).body.data;
    expect(b).toMatchObject({ name: 'b', due_on: null, overdue: false });
  });

  it('refuses an edge that would close a cycle, so a walk always ends', async () => {
    const res = await depend('e', ['r']);
    expect(res.status).toBe(409);
    expect(await path('r')).toEqual(['b', 'd', 'e']);
  });

  it('ranks open tasks by the distinct open tasks waiting on them at any depth', async () => {
    await depend('d', ['e']);
    const ranked = await ranking();
    const row = (name: string) => ranked.find((task) => task.gid === gid[name]);
    // The diamond's top: m1, m2 and u wait on it, u counted once.
    expect(row('t')).toMatchObject({ direct_count: 2, blocked_count: 3 });
    expect(row('e')).toMatchObject({ direct_count: 1, blocked_count: 3 });
    // x is completed: it holds up nothing and y waits on nothing open.
    expect(row('y')).toMatchObject({ direct_count: 0, blocked_count: 0 });
    expect(row('w')).toMatchObject({ direct_count: 1, blocked_count: 2 });
    expect(ranked.map((task) => task.gid)).not.toContain(gid.x);
    expect(ranked.map((task) => task.gid)).not.toContain(gid.k);
    expect(ranked.every((task) => task.status === 'open')).toBe(true);
    // Count, then direct count, then creation order.
    expect(ranked.map((task) => nameOf(task.gid))).toEqual([
      't',
      'e',
      'c',
      'd',
      'w',
      'a',
      'b',
      'z',
      'm1',
      'm2',
      'r',
      'y',
      'u',
    ]);
    expect(row('c')?.overdue).toBe(true);
    expect((await ranking('?limit=3')).map((task) => nameOf(task.gid))).toEqual(['t', 'e', 'c']);
    // A project's tasks, their waiters counted wherever they are.
    expect((await ranking('?project=p2')).map((task) => nameOf(task.gid))).toEqual(['w', 'z', 'y']);
  });

  it('drops a task from both reads once it is completed', async () => {
    await depend('d', ['e']);
    const done = await http(cairn.url, 'PUT', `/api/v1/tasks/${gid.e}`, {
      body: { status: 'completed' },
      headers: cairn.auth,
    });
    expect(done.status).toBe(200);
    expect(await path('r')).toEqual(['a', 'c']);
    const ranked = await ranking();
    expect(ranked.map((task) => task.gid)).not.toContain(gid.e);
    expect(ranked.find((task) => task.gid === gid.d)?.blocked_count).toBe(2);
  });

  it('answers 404 for another business and unknown tasks, 422 for bad limits', async () => {
    const beta = await cairn.token({ businesses: ['beta'] });
    for (const [method, url] of [
      ['GET', `/api/v1/tasks/${gid.r}/critical_path`],
      ['GET', '/api/v1/tasks/no-such-task/critical_path'],
      ['GET', '/api/v1/businesses/acme/bottlenecks'],
    ] as const) {
      const res = await http(cairn.url, method, url, { headers: beta });
      expect(res.status, url).toBe(404);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    }
    for (const limit of ['0', '101', '1e1', 'x']) {
      const res = await http(
        cairn.url,
        'GET',
        `/api/v1/businesses/acme/bottlenecks?limit=${limit}`,
        {
          headers: cairn.auth,
        },
      );
      expect(res.status, limit).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['query', 'limit']);
    }
    const readOnly = await cairn.token({ businesses: ['acme'], scopes: ['analytics:read'] });
    const refused = await http(cairn.url, 'GET', '/api/v1/businesses/acme/bottlenecks', {
      headers: readOnly,
    });
    expect(refused.status).toBe(403);
  });
});

describe('critical path bound', () => {
  const cairn = useCairn({ rateLimits: unlimited() });
  beforeAll(async () => {
    // A fan of MAX_WALK + 1 open dependencies under one task.
    await insertFan(cairn.db, { prefix: 'big', count: MAX_WALK + 1, waiting: 'hub-waits' });
  }, 180_000);

  it('answers 422 when the open tasks a task waits on are too many to walk', async () => {
    const res = await http(cairn.url, 'GET', '/api/v1/tasks/big-0/critical_path', {
      headers: cairn.auth,
    });
    expect(res.status, res.text).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['path', 'gid']);
    expect(res.body.detail[0].msg).toContain('too many to walk');
    // One of them completed: the rest are walked.
    await sql`update tasks set status = 'completed' where gid = 'big-1'`.execute(cairn.db);
    const walked = await http(cairn.url, 'GET', '/api/v1/tasks/big-0/critical_path', {
      headers: cairn.auth,
    });
    expect(walked.status, walked.text).toBe(200);
    expect(walked.body.meta.length).toBe(1);
    // The earliest created of equals (all created together: then the first gid, bytewise).
    expect(walked.body.data[0].gid).toBe('big-10');
  }, 180_000);
});
