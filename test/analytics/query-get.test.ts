import { beforeAll, describe, expect, it } from 'vitest';
import { useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { type HttpResult, http } from '../support/http.ts';

/** Metadata that differs between two runs of one query (see libs/analytics/answer-etag.ts). */
const VOLATILE = ['elapsed_ms', 'query_id', 'data_as_of', 'cache', 'rows_read', 'bytes_read'];
const STRONG_SHA256 = /^"[A-Za-z0-9_-]{43}"$/;

/** An answer with its volatile metadata left out: what two runs of one query share. */
function stable(answer: any): unknown {
  const metadata = { ...answer.metadata };
  for (const member of VOLATILE) delete metadata[member];
  return { ...answer, metadata };
}

describe('GET /api/v1/query?q=…: the POST query in the URL, with an ETag', () => {
  const cairn = useCairn({
    env: { CAIRN_QUERY_MAX_ROWS: '50' },
    scopes: ['analytics:read'],
    businesses: ['acme'],
  });
  let writer: Record<string, string>;

  const urlOf = (query: unknown) => `/api/v1/query?q=${encodeURIComponent(JSON.stringify(query))}`;
  /** Every answer `http` gets is checked against the document the server publishes. */
  const get = (query: unknown, headers: Record<string, string> = {}) =>
    http(cairn.url, 'GET', urlOf(query), { headers: { ...cairn.auth, ...headers } });
  const getRaw = (search: string, headers: Record<string, string> = {}) =>
    http(cairn.url, 'GET', `/api/v1/query${search}`, { headers: { ...cairn.auth, ...headers } });
  const post = (body: unknown) =>
    http(cairn.url, 'POST', '/api/v1/query', { body, headers: cairn.auth });
  const createTask = async (project: string) => {
    const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
      body: { business: 'acme', name: `Task in ${project}`, project },
      headers: writer,
    });
    expect(res.status).toBe(201);
  };
  const counted = (res: HttpResult, project: string) =>
    res.body.data.find((row: { project: string }) => row.project === project)?.tasks_created;

  beforeAll(async () => {
    writer = await cairn.token({ scopes: ['workflows:write'], businesses: ['acme'] });
    await createTask('alpha');
    await createTask('alpha');
    await createTask('beta');
    // The projector runs beside the API: wait until the three tasks are counted.
    await waitFor(
      async () => {
        const res = await post({ metrics: ['tasks_created'], period: 'last_7_days' });
        return res.body.data[0]?.tasks_created === 3;
      },
      { timeoutMs: 60_000 },
    );
  }, 90_000);

  it.each([
    ['a breakdown', { metrics: ['tasks_created', 'open_tasks'], dimensions: ['project'] }],
    [
      'a series with a comparison and totals, over a closed range',
      {
        metrics: ['tasks_created', 'completion_rate'],
        dimensions: ['week'],
        date_range: ['2026-09-01', '2026-10-31'],
        compare: 'previous_year',
        include: ['totals'],
        timezone: 'Europe/Paris',
      },
    ],
    [
      'filters, order, limit and offset',
      {
        metrics: ['tasks_created'],
        dimensions: ['project', 'status'],
        period: 'last_30_days',
        filters: [{ dimension: 'project', op: 'in', values: ['alpha', 'beta', null] }],
        order_by: [{ field: 'tasks_created', direction: 'desc' }],
        limit: 1,
        offset: 1,
      },
    ],
    [
      'Sunday weeks filled for every project',
      {
        metrics: ['tasks_created', 'completion_rate'],
        dimensions: ['week', 'project'],
        period: 'last_30_days',
        week_start: 'sunday',
        fill: 'zero',
      },
    ],
  ])('answers %s exactly as the POST does', async (_, query) => {
    const [byGet, byPost] = [await get(query), await post(query)];
    expect(byGet.status).toBe(200);
    expect(byPost.status).toBe(200);
    expect(stable(byGet.body)).toEqual(stable(byPost.body));
    expect(Object.keys(byGet.body.metadata).sort()).toEqual(
      Object.keys(byPost.body.metadata).sort(),
    );
  });

  it('answers a running period with its comparison and totals as the POST does', async () => {
    const query = {
      metrics: ['tasks_created'],
      dimensions: ['day'],
      period: 'last_7_days',
      compare: 'previous_period',
      include: ['totals'],
    };
    const [byGet, byPost] = [await get(query), await post(query)];
    expect(byGet.body.metadata.totals).toEqual({ tasks_created: 3 });
    expect(byGet.body.metadata.comparison.cut_at_elapsed).toBe(true);
    // The comparison of a running period stops at the same elapsed part: at each request's now.
    const cut = (answer: any) => {
      const copy = structuredClone(stable(answer)) as any;
      delete copy.metadata.comparison.period.to;
      return copy;
    };
    expect(cut(byGet.body)).toEqual(cut(byPost.body));
  });

  it.each([
    ['a bad metric', urlOf({ metrics: ['nope'] }), ['query', 'q', 'metrics', 0], 'enum'],
    [
      'q that is not JSON',
      `?q=${encodeURIComponent('{metrics:[')}`,
      ['query', 'q'],
      'json_invalid',
    ],
    ['an empty q', '?q=', ['query', 'q'], 'json_invalid'],
    ['q missing', '', ['query', 'q'], 'missing'],
    ['q that is not an object', '?q=null', ['query', 'q'], 'model_attributes_type'],
    ['q sent twice', '?q={}&q={}', ['query', 'q'], 'string_type'],
    [
      'an unknown member',
      urlOf({ metrics: ['tasks_created'], colour: 'red' }),
      ['query', 'q', 'colour'],
      'extra_forbidden',
    ],
    [
      'a parameter beside q',
      `${urlOf({ metrics: ['tasks_created'] })}&limit=5`,
      ['query', 'limit'],
      'extra_forbidden',
    ],
    [
      'a zone the parser does not know',
      urlOf({ metrics: ['tasks_created'], timezone: 'Mars/Olympus' }),
      ['query', 'q', 'timezone'],
      'timezone',
    ],
    [
      'too many buckets',
      urlOf({
        metrics: ['tasks_created'],
        dimensions: ['project', 'hour'],
        date_range: ['2024-01-01', '2025-12-31'],
      }),
      ['query', 'q', 'dimensions', 1],
      'too_many_buckets',
    ],
    [
      'fill without a time dimension',
      urlOf({ metrics: ['tasks_created'], dimensions: ['project'], fill: 'zero' }),
      ['query', 'q', 'fill'],
      'value_error',
    ],
    [
      'an unknown week start',
      urlOf({ metrics: ['tasks_created'], week_start: 'saturday' }),
      ['query', 'q', 'week_start'],
      'enum',
    ],
  ])('refuses %s with a 422 under ["query","q",…]', async (_, url, loc, type) => {
    const res = await getRaw(url.replace(/^\/api\/v1\/query/, ''));
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body.detail).toEqual(
      expect.arrayContaining([expect.objectContaining({ loc, type })]),
    );
    // Nothing is placed in a body this request does not have.
    expect(res.body.detail.filter((issue: { loc: string[] }) => issue.loc[0] !== 'query')).toEqual(
      [],
    );
  });

  it('lists every issue of q at once, each where it is', async () => {
    const res = await get({ metrics: ['nope'], period: 'fortnight', limit: 51 });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((issue: { loc: unknown }) => issue.loc)).toEqual(
      expect.arrayContaining([
        ['query', 'q', 'metrics', 0],
        ['query', 'q', 'period'],
        ['query', 'q', 'limit'],
      ]),
    );
  });

  it('tags the answer with a strong ETag; If-None-Match with it is a 304 without a body', async () => {
    const query = { metrics: ['tasks_created', 'open_tasks'], dimensions: ['status'] };
    const first = await get(query);
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(STRONG_SHA256);
    expect(first.headers.get('cache-control')).toBe('private, no-cache');

    // The same query computed afresh: another query_id and timings, the same tag.
    const again = await get(query, { 'Cache-Control': 'no-cache' });
    expect(again.body.metadata.query_id).not.toBe(first.body.metadata.query_id);
    expect(again.headers.get('etag')).toBe(etag);

    const notModified = await get(query, { 'If-None-Match': etag as string });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');
    expect(notModified.headers.get('etag')).toBe(etag);
    expect(notModified.headers.get('cache-control')).toBe('private, no-cache');
    // One of several tags, or the tag marked weak (If-None-Match compares weakly), also matches.
    expect((await get(query, { 'If-None-Match': `"other", ${etag}` })).status).toBe(304);
    expect((await get(query, { 'If-None-Match': `W/${etag}` })).status).toBe(304);
    expect((await get(query, { 'If-None-Match': '"other"' })).status).toBe(200);

    // Another query is another answer: another tag, and the first one does not match it.
    const other = await get({ ...query, dimensions: ['project'] }, { 'If-None-Match': etag! });
    expect(other.status).toBe(200);
    expect(other.headers.get('etag')).toMatch(STRONG_SHA256);
    expect(other.headers.get('etag')).not.toBe(etag);

    // The POST answers no ETag and keeps the service's no-store.
    const posted = await post(query);
    expect(posted.headers.get('etag')).toBeNull();
    expect(posted.headers.get('cache-control')).toBe('no-store');
  });

  it('computes afresh for Cache-Control: no-cache, and still answers 304 when nothing changed', async () => {
    const query = { metrics: ['tasks_created'], dimensions: ['project'], period: 'this_month' };
    const first = await get(query);
    const etag = first.headers.get('etag') as string;
    const fresh = await get(query, { 'Cache-Control': 'no-cache' });
    expect(fresh.status).toBe(200);
    expect(fresh.body.metadata.cache).toBe('miss');
    expect(fresh.headers.get('etag')).toBe(etag);
    const revalidated = await get(query, { 'Cache-Control': 'no-cache', 'If-None-Match': etag });
    expect(revalidated.status).toBe(304);
  });

  it('changes the ETag once new facts are projected: the old one then gets a 200', async () => {
    const query = { metrics: ['tasks_created'], dimensions: ['project'], period: 'last_7_days' };
    const before = await get(query);
    const etag = before.headers.get('etag') as string;
    expect(counted(before, 'gamma')).toBeUndefined();
    expect((await get(query, { 'If-None-Match': etag })).status).toBe(304);

    await createTask('gamma');
    const after = await waitFor(
      async () => {
        const res = await get(query, { 'If-None-Match': etag });
        if (res.status === 304) return false;
        expect(res.status).toBe(200);
        return res;
      },
      { timeoutMs: 60_000 },
    );
    expect(counted(after, 'gamma')).toBe(1);
    const changed = after.headers.get('etag') as string;
    expect(changed).toMatch(STRONG_SHA256);
    expect(changed).not.toBe(etag);
    expect((await get(query, { 'If-None-Match': changed })).status).toBe(304);
  });

  it('needs the analytics:read scope, as the POST does', async () => {
    const query = { metrics: ['tasks_created'] };
    const reader = await cairn.token({ scopes: ['workflows:read'], businesses: ['acme'] });
    const refused = await http(cairn.url, 'GET', urlOf(query), { headers: reader });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.headers.get('etag')).toBeNull();
    expect((await http(cairn.url, 'GET', urlOf(query))).status).toBe(401);
    // A business outside the token is not found, as in the POST.
    expect((await get({ ...query, business: 'globex' })).status).toBe(404);
    const served = await get(query);
    expect(served.status).toBe(200);
    expect(served.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
  });
});
