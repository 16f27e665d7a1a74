import { beforeAll, describe, expect, it } from 'vitest';
import type { Route } from '../../libs/http/route.ts';
import { useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';

interface Ids {
  t1: string;
  t2: string;
  own: string;
  view: string;
  embed: string;
}
interface Attempt {
  path: string;
  body?: unknown;
  /** A batch: the request succeeds, and each of its answers is that 404. */
  batch?: true;
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
  createView: () => [
    {
      path: '/api/v1/views',
      body: { name: 'hijack', query: { metrics: ['tasks_created'], business: 'alpha' } },
    },
  ],
  // A listing shows only the caller's views (test/views/views.test.ts): nothing of A to name.
  listViews: () => [],
  getView: ({ view }) => [{ path: `/api/v1/views/${view}` }],
  replaceView: ({ view }) => [
    {
      path: `/api/v1/views/${view}`,
      body: { name: 'hijacked', query: { metrics: ['tasks_created'] } },
    },
  ],
  deleteView: ({ view }) => [{ path: `/api/v1/views/${view}` }],
  getViewAnswer: ({ view }) => [{ path: `/api/v1/views/${view}/answer` }],
  createViewEmbed: ({ view }) => [
    { path: `/api/v1/views/${view}/embeds`, body: { expires_in_days: 1 } },
  ],
  listViewEmbeds: ({ view }) => [{ path: `/api/v1/views/${view}/embeds` }],
  revokeViewEmbed: ({ view, embed }) => [{ path: `/api/v1/views/${view}/embeds/${embed}` }],
  // The gauges serve only the caller's views (test/views/views.test.ts): nothing of A to name.
  getViewGauges: () => [],
  removeDependency: ({ t1, t2 }) => [{ path: `/api/v1/tasks/${t1}/dependencies/${t2}` }],
  getCriticalPath: ({ t1 }) => [{ path: `/api/v1/tasks/${t1}/critical_path` }],
  listBottlenecks: () => [
    { path: '/api/v1/businesses/alpha/bottlenecks' },
    { path: '/api/v1/businesses/alpha/bottlenecks?project=p&limit=5' },
  ],
  forecastCompletion: () => [
    { path: '/api/v1/forecast', body: { business: 'alpha', history: 'last_30_days' } },
    {
      path: '/api/v1/forecast',
      body: { business: 'alpha', project: 'p', history: ['2026-01-01', '2026-01-31'], seed: 1 },
    },
  ],
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
  runQueryBatch: () => [
    {
      path: '/api/v1/query/batch',
      body: {
        queries: [
          { metrics: ['tasks_created'], business: 'alpha' },
          { metrics: ['open_tasks'], business: 'alpha', dimensions: ['project'] },
        ],
      },
      batch: true,
    },
  ],
  exportQuery: () => [
    { path: '/api/v1/query/export', body: { metrics: ['tasks_created'], business: 'alpha' } },
  ],
  getQueryExport: () => [
    {
      path: `/api/v1/query/export?q=${encodeURIComponent(JSON.stringify({ metrics: ['tasks_created'], business: 'alpha' }))}`,
    },
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
      await db.selectFrom('views').selectAll().orderBy('id').execute(),
      await db.selectFrom('view_embeds').selectAll().orderBy('id').execute(),
    ]);
  };

  beforeAll(async () => {
    const a = cairn.auth;
    b = await cairn.token({ businesses: ['beta'] });
    const create = async (headers: Record<string, string>, business: string) =>
      (await http(cairn.url, 'POST', '/api/v1/tasks', { headers, body: { business, name: 'x' } }))
        .body.data.gid as string;
    const view = await http(cairn.url, 'POST', '/api/v1/views', {
      headers: a,
      body: { name: 'of alpha', query: { metrics: ['tasks_created'] } },
    });
    const embed = await http(cairn.url, 'POST', `/api/v1/views/${view.body.data.id}/embeds`, {
      headers: a,
      body: { expires_in_days: 1 },
    });
    ids = {
      t1: await create(a, 'alpha'),
      t2: await create(a, 'alpha'),
      own: await create(b, 'beta'),
      view: view.body.data.id,
      embed: embed.body.data.id,
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
        const what = `${route.operationId} ${attempt.path} ${JSON.stringify(attempt.body)} ${res.text}`;
        if (attempt.batch) {
          expect(res.status, what).toBe(200);
          for (const item of res.body.data) {
            expect(item.status, what).toBe(404);
            expect(item.error, what).toMatchObject({ status: 404, title: 'Not Found' });
            expect(item.data, what).toBeUndefined();
          }
          continue;
        }
        expect(res.status, what).toBe(404);
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

  it('answers a business outside the token like one that exists nowhere, listing its own', async () => {
    const answers = [];
    for (const business of ['alpha', 'nowhere']) {
      for (const [method, path, body] of [
        ['GET', `/api/v1/tasks?business=${business}`, undefined],
        ['POST', '/api/v1/query', { metrics: ['tasks_created'], business }],
        ['GET', `/api/v1/businesses/${business}/dimensions/project/values`, undefined],
      ] as const) {
        const res = await http(cairn.url, method, path, {
          headers: b,
          ...(body === undefined ? {} : { body }),
        });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.headers.get('content-type')).toContain('application/problem+json');
        expect(res.body).toMatchObject({
          title: 'Not Found',
          detail: `No business '${business}' is readable with this token.`,
          businesses: ['beta'],
        });
        answers.push({
          ...res.body,
          detail: res.body.detail.replace(business, 'B'),
          instance: undefined,
          request_id: undefined,
        });
      }
    }
    expect(answers.slice(0, 3)).toEqual(answers.slice(3));
  });
});
