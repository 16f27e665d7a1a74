import { beforeAll, describe, expect, it } from 'vitest';
import type { Route } from '../libs/http/route.ts';
import { useCairn } from './support/cairn.ts';
import { http } from './support/http.ts';

interface Ids {
  t1: string;
  t2: string;
  own: string;
}
interface Attempt {
  path: string;
  body?: unknown;
}

/**
 * How each operation can name business A's objects: in the path, the query or the body. An
 * operation missing here fails the test, so a new route cannot slip past the matrix.
 */
const ATTEMPTS: Record<string, (ids: Ids) => Attempt[]> = {
  createTask: () => [{ path: '/api/v1/tasks', body: { business: 'alpha', name: 'hijack' } }],
  listTasks: () => [{ path: '/api/v1/tasks?business=alpha' }],
  getTask: ({ t1 }) => [{ path: `/api/v1/tasks/${t1}` }],
  updateTask: ({ t1 }) => [{ path: `/api/v1/tasks/${t1}`, body: { name: 'hijacked' } }],
  deleteTask: ({ t1 }) => [{ path: `/api/v1/tasks/${t1}` }],
  listDependents: ({ t2 }) => [{ path: `/api/v1/tasks/${t2}/dependents` }],
  listDependencies: ({ t1 }) => [{ path: `/api/v1/tasks/${t1}/dependencies` }],
  addDependencies: ({ t1, t2, own }) => [
    { path: `/api/v1/tasks/${t1}/dependencies`, body: { dependencies: [own] } },
    { path: `/api/v1/tasks/${own}/dependencies`, body: { dependencies: [t1] } },
    { path: `/api/v1/tasks/${own}/dependencies`, body: { dependencies: [own, t2] } },
  ],
  removeDependency: ({ t1, t2 }) => [{ path: `/api/v1/tasks/${t1}/dependencies/${t2}` }],
  // The metric and dimension catalog names no business's data.
  getQueryCatalog: () => [],
  // A token's own record names only the businesses it already holds.
  getOwnToken: () => [],
  runQuery: () => [
    { path: '/api/v1/query', body: { metrics: ['tasks_created'], business: 'alpha' } },
  ],
  listDimensionValues: () => [
    { path: '/api/v1/businesses/alpha/dimensions/project/values' },
    { path: '/api/v1/businesses/alpha/dimensions/status/values?prefix=o&period=all_time' },
  ],
  getQuery: () => [
    {
      path: `/api/v1/query?q=${encodeURIComponent(JSON.stringify({ metrics: ['tasks_created'], business: 'alpha' }))}`,
    },
  ],
};

/** Operations that hold no business data: the master key's token endpoints. */
const NOT_BUSINESS_SCOPED = new Set(['master']);

describe('cross-business matrix', () => {
  const cairn = useCairn({ businesses: ['alpha'] });
  let ids: Ids;
  let b: Record<string, string>;

  const snapshot = async () => {
    const db = cairn.db;
    return JSON.stringify([
      await db.selectFrom('tasks').selectAll().orderBy('gid').execute(),
      await db.selectFrom('task_dependencies').selectAll().orderBy('id').execute(),
      await db.selectFrom('outbox').select(['id', 'kind', 'task_gid']).orderBy('id').execute(),
    ]);
  };

  beforeAll(async () => {
    const a = cairn.auth;
    b = await cairn.token({ businesses: ['beta'] });
    const create = async (headers: Record<string, string>, business: string) =>
      (await http(cairn.url, 'POST', '/api/v1/tasks', { headers, body: { business, name: 'x' } }))
        .body.data.gid as string;
    ids = {
      t1: await create(a, 'alpha'),
      t2: await create(a, 'alpha'),
      own: await create(b, 'beta'),
    };
    const edge = await http(cairn.url, 'POST', `/api/v1/tasks/${ids.t1}/dependencies`, {
      headers: a,
      body: { dependencies: [ids.t2] },
    });
    expect(edge.status).toBe(200);
  });

  it('answers 404 to every reference to business A from a token of business B', async () => {
    const before = await snapshot();
    const businessRoutes = cairn.routes.filter(
      (route: Route) => route.scope !== null && !NOT_BUSINESS_SCOPED.has(route.scope),
    );
    for (const route of businessRoutes) {
      const attempts = ATTEMPTS[route.operationId];
      expect(attempts, `no cross-business case for ${route.operationId}`).toBeDefined();
      for (const attempt of attempts?.(ids) ?? []) {
        const res = await http(cairn.url, route.method.toUpperCase(), attempt.path, {
          headers: b,
          ...(attempt.body === undefined ? {} : { body: attempt.body }),
        });
        expect(
          res.status,
          `${route.operationId} ${attempt.path} ${JSON.stringify(attempt.body)} ${res.text}`,
        ).toBe(404);
        expect(res.headers.get('content-type')).toContain('application/problem+json');
      }
    }
    expect(await snapshot()).toBe(before);
  });

  it('answers a foreign object exactly like a missing one', async () => {
    const foreign = await http(cairn.url, 'GET', `/api/v1/tasks/${ids.t1}`, { headers: b });
    const missing = await http(cairn.url, 'GET', '/api/v1/tasks/no-such-task', { headers: b });
    const strip = (body: Record<string, unknown>) => ({
      ...body,
      detail: String(body.detail).replace(/\S+(?= does not exist)/, 'ID'),
      instance: undefined,
      request_id: undefined,
    });
    expect(strip(foreign.body)).toEqual(strip(missing.body));
  });
});
