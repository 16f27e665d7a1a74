/**
 * Every operation of /openapi.json, called as a user of openapi-typescript and openapi-fetch
 * would: `createClient<paths>()` with no other type argument, each answer's `data` read as its
 * generated type. test/api-document/typed-client.test.ts generates ./schema.ts from a live server beside a
 * copy of this file, type-checks both with strict tsc and runs it; it prints what it saw.
 *
 *   BASE_URL=http://127.0.0.1:8080 MASTER_KEY=… BUSINESS=<unused name> tsx every-operation.ts
 *
 * It issues its own token for BUSINESS and erases BUSINESS at the end.
 */
import createClient from 'openapi-fetch';
import type { operations, paths } from './schema.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const client = createClient<paths>({ baseUrl: env('BASE_URL') });
const master = { Authorization: `Bearer ${env('MASTER_KEY')}` };
const business = env('BUSINESS');
const seen: Record<string, unknown> = {};
function check(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(`unexpected answer: ${what}`);
}
function fail(operation: string, error: unknown): never {
  throw new Error(`${operation}: ${JSON.stringify(error)}`);
}

// The platform: a redirect, probes, metrics, the document and two pages.
{
  const { response } = await client.GET('/', { redirect: 'manual' });
  seen.getRoot = [response.status, response.headers.get('location')];
}
{
  const { data, error } = await client.GET('/healthz');
  if (error) fail('getHealth', error);
  seen.getHealth = data.status;
}
{
  const { data, error } = await client.GET('/readyz');
  if (error) fail('getReadiness', error);
  seen.getReadiness = [data.status, Object.keys(data.checks).length > 0];
}
{
  const { data, error } = await client.GET('/metrics', { parseAs: 'text' });
  if (error) fail('getMetrics', error);
  seen.getMetrics = data.includes('# TYPE ');
}
{
  const { data, error } = await client.GET('/openapi.json');
  if (error) fail('getOpenApi', error);
  seen.getOpenApi = [data.openapi, data.info.title, Object.keys(data.paths).length];
}
{
  const { data, error } = await client.GET('/docs', { parseAs: 'text' });
  if (error) fail('getDocs', error);
  seen.getDocs = data.includes('<html');
}
{
  const { data, error } = await client.GET('/explore', { parseAs: 'text' });
  if (error) fail('getExplorer', error);
  seen.getExplorer = data.includes('<html');
}

// Tokens, with the master key.
const created = await client.POST('/api/v1/tokens', {
  headers: master,
  body: {
    name: 'typed client',
    scopes: ['analytics:read', 'analytics:write', 'workflows:read', 'workflows:write'],
    businesses: [business],
    kind: 'service_account',
  },
});
if (created.error) fail('createToken', created.error);
const token = created.data.data;
seen.createToken = [token.kind, token.businesses, token.token.startsWith('cairn_')];
const auth = { Authorization: `Bearer ${token.token}` };
{
  const { data, error } = await client.GET('/api/v1/tokens', {
    headers: master,
    params: { query: { per_page: 100 } },
  });
  if (error) fail('listTokens', error);
  seen.listTokens = data.data.find((listed) => listed.id === token.id)?.state;
}
{
  const { data, error } = await client.GET('/api/v1/tokens/self', { headers: auth });
  if (error) fail('getOwnToken', error);
  seen.getOwnToken = [data.data.id === token.id, data.data.scopes];
}

// Tasks and dependencies: Draft ← Review ← Ship (each waits on the one before).
const task = async (name: string, project: string) => {
  const { data, error } = await client.POST('/api/v1/tasks', {
    headers: auth,
    body: { business, name, project, assignee: 'ana', due_on: '2026-12-01' },
  });
  if (error) fail('createTask', error);
  return data.data;
};
const draft = await task('Draft', 'launch');
const review = await task('Review', 'launch');
const ship = await task('Ship', 'landing');
seen.createTask = [draft.resource_type, draft.status, ship.project];
{
  const { data, error } = await client.GET('/api/v1/tasks/{gid}', {
    headers: auth,
    params: { path: { gid: draft.gid } },
  });
  if (error) fail('getTask', error);
  seen.getTask = data.data.name;
}
{
  const { data, error } = await client.PUT('/api/v1/tasks/{gid}', {
    headers: auth,
    params: { path: { gid: draft.gid } },
    body: { status: 'completed' },
  });
  if (error) fail('updateTask', error);
  seen.updateTask = [data.data.status, data.data.completed_at !== null];
}
{
  const { data, error } = await client.GET('/api/v1/tasks', {
    headers: auth,
    params: { query: { business, sort: 'created_at', order: 'asc' } },
  });
  if (error) fail('listTasks', error);
  seen.listTasks = [data.meta.total, data.data.map((listed) => listed.name)];
}
for (const [waiting, on] of [
  [review, draft],
  [ship, review],
] as const) {
  const { data, error } = await client.POST('/api/v1/tasks/{gid}/dependencies', {
    headers: auth,
    params: { path: { gid: waiting.gid } },
    body: { dependencies: [on.gid] },
  });
  if (error) fail('addDependencies', error);
  seen.addDependencies = data.data.gid === waiting.gid;
}
{
  const { data, error } = await client.GET('/api/v1/tasks/{gid}/dependents', {
    headers: auth,
    params: { path: { gid: draft.gid }, query: { depth: 'all', opt_fields: 'status' } },
  });
  if (error) fail('listDependents', error);
  seen.listDependents = data.data.map((dependent) => [dependent.name, dependent.depth]).sort();
}
{
  const { data, error } = await client.GET('/api/v1/tasks/{gid}/dependencies', {
    headers: auth,
    params: { path: { gid: ship.gid }, query: { depth: 'all' } },
  });
  if (error) fail('listDependencies', error);
  seen.listDependencies = data.data.map((dependency) => [dependency.name, dependency.depth]).sort();
}
{
  const { data, error } = await client.GET('/api/v1/tasks/{gid}/critical_path', {
    headers: auth,
    params: { path: { gid: ship.gid } },
  });
  if (error) fail('getCriticalPath', error);
  seen.getCriticalPath = [data.data.map((step) => [step.name, step.status]), data.meta.length];
}
{
  const { data, error } = await client.GET('/api/v1/businesses/{business}/bottlenecks', {
    headers: auth,
    params: { path: { business }, query: { limit: 5 } },
  });
  if (error) fail('listBottlenecks', error);
  seen.listBottlenecks = data.data.map((open) => [
    open.name,
    open.blocked_count,
    open.direct_count,
  ]);
}
{
  const { response, error } = await client.DELETE(
    '/api/v1/tasks/{gid}/dependencies/{dependency_gid}',
    { headers: auth, params: { path: { gid: ship.gid, dependency_gid: review.gid } } },
  );
  if (error) fail('removeDependency', error);
  seen.removeDependency = response.status;
}
{
  const { response, error } = await client.DELETE('/api/v1/tasks/{gid}', {
    headers: auth,
    params: { path: { gid: ship.gid } },
  });
  if (error) fail('deleteTask', error);
  seen.deleteTask = response.status;
}

// Analytics, once the projector has carried the three creations into ClickHouse.
type Query = operations['runQuery']['requestBody']['content']['application/json'];
const query: Query = {
  metrics: ['tasks_created', 'tasks_completed', 'completion_rate'],
  dimensions: ['project'],
  // A business of its own: every fact of all time is one this program wrote.
  period: 'all_time',
  business,
  include: ['totals'],
};
for (let attempt = 0; ; attempt++) {
  const { data, error } = await client.POST('/api/v1/query', {
    headers: { ...auth, 'Cache-Control': 'no-cache' },
    body: query,
  });
  if (error) fail('runQuery', error);
  const created = data.data.reduce((sum, row) => sum + (row.tasks_created ?? 0), 0);
  const completed: number | null | undefined = data.metadata.totals?.tasks_completed;
  if (created === 3 && completed === 1) {
    seen.runQuery = [
      data.data.map((row) => [row.project, row.tasks_created, row.completion_rate]),
      data.metadata.total_rows,
      data.metadata.totals?.completion_rate,
      data.metadata.query.period.name,
    ];
    break;
  }
  check(attempt < 600, `facts never projected: ${JSON.stringify(data)}`);
  await new Promise((resolve) => setTimeout(resolve, 100));
}
{
  // The open work as projected by now: a number whatever the projector has reached.
  const { data, error } = await client.POST('/api/v1/forecast', {
    headers: auth,
    body: { business, history: 'last_30_days', trials: 1000, seed: 7 },
  });
  if (error) fail('forecastCompletion', error);
  seen.forecastCompletion = [
    typeof data.data.open_tasks,
    typeof data.data.throughput_per_day,
    Object.keys(data.data.completion).sort(),
  ];
}
{
  const { data, error } = await client.GET('/api/v1/query', {
    headers: auth,
    params: { query: { q: JSON.stringify(query) } },
  });
  if (error) fail('getQuery', error);
  seen.getQuery = data.data.map((row) => [row.project, row.tasks_created]);
}
{
  // A business the token does not hold: that query's 404 problem, in its place.
  const { data, error } = await client.POST('/api/v1/query/batch', {
    headers: auth,
    body: { queries: [query, { ...query, business: 'nowhere' }, query] },
  });
  if (error) fail('runQueryBatch', error);
  seen.runQueryBatch = data.data.map((item) => [item.status, item.data?.length ?? null]);
}
{
  const { data, error } = await client.POST('/api/v1/query/export', {
    headers: { ...auth, Accept: 'text/csv' },
    body: query,
    parseAs: 'text',
  });
  if (error) fail('exportQuery', error);
  seen.exportQuery = data.trimEnd().split('\r\n');
}
{
  const { data, error } = await client.GET('/api/v1/query/export', {
    headers: { ...auth, Accept: 'application/x-ndjson' },
    params: { query: { q: JSON.stringify(query) } },
    parseAs: 'text',
  });
  if (error) fail('getQueryExport', error);
  seen.getQueryExport = data
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line).project);
}
{
  const { data, error } = await client.GET('/api/v1/query/catalog', { headers: auth });
  if (error) fail('getQueryCatalog', error);
  seen.getQueryCatalog = data.data.metrics.some((metric) => metric.name === 'tasks_created');
}
{
  const { data, error } = await client.GET(
    '/api/v1/businesses/{business}/dimensions/{dimension}/values',
    {
      headers: { ...auth, 'Cache-Control': 'no-cache' },
      params: { path: { business, dimension: 'project' }, query: { prefix: 'la' } },
    },
  );
  if (error) fail('listDimensionValues', error);
  seen.listDimensionValues = data.data.map((value) => value.value);
}

{
  // A saved view of the query, its answer, an embed of it, and all of them gone again.
  const created = await client.POST('/api/v1/views', {
    headers: auth,
    body: { name: 'Launch', query, prometheus: true },
  });
  if (created.error) fail('createView', created.error);
  const view = created.data.data;
  seen.createView = [view.name, view.prometheus];
  const listed = await client.GET('/api/v1/views', { headers: auth });
  if (listed.error) fail('listViews', listed.error);
  seen.listViews = listed.data.data.map((v) => v.name);
  const one = await client.GET('/api/v1/views/{id}', {
    headers: auth,
    params: { path: { id: view.id } },
  });
  if (one.error) fail('getView', one.error);
  seen.getView = one.data.data.id === view.id;
  const replaced = await client.PUT('/api/v1/views/{id}', {
    headers: auth,
    params: { path: { id: view.id } },
    body: { name: 'Launch, renamed', query, prometheus: true },
  });
  if (replaced.error) fail('replaceView', replaced.error);
  seen.replaceView = replaced.data.data.name;
  const answer = await client.GET('/api/v1/views/{id}/answer', {
    headers: auth,
    params: { path: { id: view.id } },
  });
  if (answer.error) fail('getViewAnswer', answer.error);
  seen.getViewAnswer = answer.data.data.length;
  const gauges = await client.GET('/metrics/views', { headers: auth, parseAs: 'text' });
  if (gauges.error) fail('getViewGauges', gauges.error);
  seen.getViewGauges = gauges.data.includes(view.id);
  const embed = await client.POST('/api/v1/views/{id}/embeds', {
    headers: auth,
    params: { path: { id: view.id } },
    body: { expires_in_days: 1 },
  });
  if (embed.error) fail('createViewEmbed', embed.error);
  const { embed_token: embedToken, id: embedId } = embed.data.data;
  seen.createViewEmbed = embedToken.startsWith('cairn_embed_');
  const embeds = await client.GET('/api/v1/views/{id}/embeds', {
    headers: auth,
    params: { path: { id: view.id } },
  });
  if (embeds.error) fail('listViewEmbeds', embeds.error);
  seen.listViewEmbeds = embeds.data.data.map((e) => e.state);
  const page = await client.GET('/embed/{embed_token}', {
    params: { path: { embed_token: embedToken } },
    parseAs: 'text',
  });
  if (page.error) fail('getEmbedPage', page.error);
  seen.getEmbedPage = page.data.includes('<html');
  const embedded = await client.GET('/embed/{embed_token}/answer', {
    params: { path: { embed_token: embedToken } },
  });
  if (embedded.error) fail('getEmbedAnswer', embedded.error);
  seen.getEmbedAnswer = embedded.data.data.length;
  const revoked = await client.DELETE('/api/v1/views/{id}/embeds/{embed_id}', {
    headers: auth,
    params: { path: { id: view.id, embed_id: embedId } },
  });
  if (revoked.error) fail('revokeViewEmbed', revoked.error);
  seen.revokeViewEmbed = revoked.response.status;
  const deleted = await client.DELETE('/api/v1/views/{id}', {
    headers: auth,
    params: { path: { id: view.id } },
  });
  if (deleted.error) fail('deleteView', deleted.error);
  seen.deleteView = deleted.response.status;
}
// Revocation and erasure, with the master key.
{
  const { response, error } = await client.DELETE('/api/v1/tokens/{id}', {
    headers: master,
    params: { path: { id: token.id } },
  });
  if (error) fail('revokeToken', error);
  seen.revokeToken = response.status;
}
{
  const { data, error } = await client.DELETE('/api/v1/businesses/{business}', {
    headers: master,
    params: { path: { business } },
  });
  if (error) fail('eraseBusiness', error);
  seen.eraseBusiness = data.data.status === 'running' || data.data.status === 'done';
}
for (let attempt = 0; ; attempt++) {
  const { data, error } = await client.GET('/api/v1/businesses/{business}/erasure', {
    headers: master,
    params: { path: { business } },
  });
  if (error) fail('getBusinessErasure', error);
  if (data.data.status === 'done') {
    seen.getBusinessErasure = data.data.status;
    break;
  }
  check(attempt < 600, 'the erasure never finished');
  await new Promise((resolve) => setTimeout(resolve, 100));
}
console.log(JSON.stringify(seen));
