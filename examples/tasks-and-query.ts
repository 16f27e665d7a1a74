/**
 * A client of Cairn written against types generated from its /openapi.json: it creates a task
 * with dependents, pages through them with the opaque cursor, and runs an analytics query, then
 * refreshes it with If-None-Match.
 *
 *   npm run example:client      (generates examples/generated/cairn-api.d.ts from a running server)
 *   CAIRN_URL=http://127.0.0.1:8080 CAIRN_TOKEN=$(cat .data/demo.token) npm run example
 */
import createClient from 'openapi-fetch';
import type { paths } from './generated/cairn-api.d.ts';

const baseUrl = process.env.CAIRN_URL ?? 'http://127.0.0.1:8080';
const token = process.env.CAIRN_TOKEN;
const business = process.env.CAIRN_BUSINESS ?? 'acme';
if (!token) throw new Error('set CAIRN_TOKEN to a token with workflows and analytics scopes');

const cairn = createClient<paths>({
  baseUrl,
  headers: { Authorization: `Bearer ${token}` },
});

/** openapi-fetch returns `{data}` or `{error}`; a failed call stops the example with its problem. */
function ok<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.data === undefined) {
    throw new Error(`${answer.response.status}: ${JSON.stringify(answer.error)}`);
  }
  return answer.data;
}

// 1. A release task, and five tasks that depend on it.
const release = ok(
  await cairn.POST('/api/v1/tasks', {
    body: { business, name: 'Release 2.0', project: 'website', due_on: '2030-01-31' },
  }),
).data;
for (const name of ['Write notes', 'Tag build', 'Update docs', 'Announce', 'Retro']) {
  const task = ok(
    await cairn.POST('/api/v1/tasks', { body: { business, name, project: 'website' } }),
  );
  ok(
    await cairn.POST('/api/v1/tasks/{gid}/dependencies', {
      params: { path: { gid: task.data.gid } },
      body: { dependencies: [release.gid] },
    }),
  );
}
console.log(`created ${release.gid} (${release.name}) and 5 tasks that depend on it`);

// 2. Its dependents, two per page, following next_offset until has_more is false.
let offset: string | undefined;
let pages = 0;
const names: string[] = [];
do {
  const page = ok(
    await cairn.GET('/api/v1/tasks/{gid}/dependents', {
      params: { path: { gid: release.gid }, query: { limit: 2, offset, opt_fields: 'status' } },
    }),
  );
  pages += 1;
  names.push(...page.data.map((task) => String(task.name)));
  offset = page.pagination?.has_more ? (page.pagination.next_offset ?? undefined) : undefined;
} while (offset);
console.log(`dependents in ${pages} pages: ${names.join(', ')}`);

// 3. Tasks created per day this week, with the open ones at the end of each day.
const query: QueryBody = {
  metrics: ['tasks_created', 'open_tasks'],
  dimensions: ['day'],
  period: 'last_7_days',
  business,
};
const answer = ok(await cairn.POST('/api/v1/query', { body: query })) as QueryAnswer;
const created = answer.data.reduce((sum, row) => sum + Number(row.tasks_created ?? 0), 0);
console.log(`query: ${answer.data.length} rows, ${created} tasks created`);
for (const warning of answer.warnings ?? [])
  console.log(`warning ${warning.code}: ${warning.message}`);

// 4. The same query by GET (its JSON in `q`), then a refresh sending the answer's ETag back: a
// 304 without a body while the answer holds. A 200 instead carries the new answer and ETag.
const q = JSON.stringify(query);
const first = await cairn.GET('/api/v1/query', { params: { query: { q } } });
ok(first);
const etag = first.response.headers.get('ETag') ?? '';
const refresh = await cairn.GET('/api/v1/query', {
  params: { query: { q }, header: { 'If-None-Match': etag } },
});
if (refresh.response.status !== 304) ok(refresh);
console.log(`refresh: ${refresh.response.status === 304 ? 'not modified (304)' : 'changed (200)'}`);

/** What `POST /api/v1/query` takes, and `GET /api/v1/query` in its `q` as JSON. */
type QueryBody = NonNullable<
  paths['/api/v1/query']['post']['requestBody']
>['content']['application/json'];

/** The members of an analytics answer this example reads. */
interface QueryAnswer {
  data: Array<Record<string, unknown>>;
  warnings?: Array<{ code: string; message: string }>;
}
