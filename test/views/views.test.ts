import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { randomSecret } from '../support/auth.ts';
import { useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { type HttpResult, http } from '../support/http.ts';

/** Metadata that differs between two runs of one query (see libs/analytics/answer-etag.ts). */
const VOLATILE = ['elapsed_ms', 'query_id', 'data_as_of', 'cache', 'rows_read', 'bytes_read'];
const stable = (answer: any): unknown => {
  const metadata = { ...answer.metadata };
  for (const member of VOLATILE) delete metadata[member];
  return { ...answer, metadata };
};

const BY_PROJECT = {
  metrics: ['tasks_created'],
  dimensions: ['project', 'status'],
  period: 'last_7_days',
};

describe('saved views and their embeds', () => {
  const cairn = useCairn({
    businesses: ['acme'],
    scopes: ['analytics:read', 'analytics:write'],
    // A master key for the erasure, with embedded engines and servers alike.
    env: {
      CAIRN_EMBED_RATE_LIMIT: '6',
      CAIRN_MASTER_KEY: randomSecret(),
      CAIRN_VIEW_METRICS_MAX_SERIES: '4',
      // Longer than the test: a scrape never answers a view anew unless the view changed.
      CAIRN_VIEW_METRICS_INTERVAL_S: '3600',
    },
  });
  /** acme and globex, both scopes. */
  let both: Record<string, string>;
  /** globex only. */
  let globex: Record<string, string>;
  let readOnly: Record<string, string>;
  let writeOnly: Record<string, string>;

  const call = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
    http(cairn.url, method, path, { headers, ...(body === undefined ? {} : { body }) });
  const createView = async (body: unknown, headers: Record<string, string> = cairn.auth) => {
    const res = await call('POST', '/api/v1/views', headers, body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data;
  };
  const createEmbed = async (viewId: string, body: unknown) => {
    const res = await call('POST', `/api/v1/views/${viewId}/embeds`, cairn.auth, body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data;
  };
  const embedAnswer = (token: string, q?: unknown, headers: Record<string, string> = {}) =>
    http(
      cairn.url,
      'GET',
      `/embed/${token}/answer${q === undefined ? '' : `?q=${encodeURIComponent(JSON.stringify(q))}`}`,
      { headers },
    );
  const projects = (res: HttpResult) =>
    [...new Set(res.body.data.map((row: { project: string }) => row.project))].sort();

  beforeAll(async () => {
    both = await cairn.token({
      businesses: ['acme', 'globex'],
      scopes: ['analytics:read', 'analytics:write', 'workflows:write'],
    });
    globex = await cairn.token({
      businesses: ['globex'],
      scopes: ['analytics:read', 'analytics:write'],
    });
    readOnly = await cairn.token({ businesses: ['acme'], scopes: ['analytics:read'] });
    writeOnly = await cairn.token({ businesses: ['acme'], scopes: ['analytics:write'] });
    for (const [business, project, status] of [
      ['acme', 'alpha', 'open'],
      ['acme', 'alpha', 'open'],
      ['acme', 'beta', 'open'],
      ['globex', 'gamma', 'open'],
    ]) {
      const res = await call('POST', '/api/v1/tasks', both, {
        business,
        name: `Task in ${project}`,
        project,
        status,
      });
      expect(res.status).toBe(201);
    }
    await waitFor(
      async () => {
        const res = await call('POST', '/api/v1/query', both, {
          metrics: ['tasks_created'],
          period: 'last_7_days',
        });
        return res.body.data[0]?.tasks_created === 4;
      },
      { timeoutMs: 60_000 },
    );
  }, 90_000);

  it('saves a query as a view and shows it in the shape of the contract', async () => {
    const view = await createView({
      name: 'Acme by project',
      query: { ...BY_PROJECT, business: 'acme' },
    });
    expect(view).toMatchObject({
      name: 'Acme by project',
      business: 'acme',
      businesses: ['acme'],
      prometheus: false,
      query: { ...BY_PROJECT, business: 'acme', offset: 0 },
    });
    expect(view.id).toMatch(/^view_[0-9a-f]{16}$/);
    expect(Date.parse(view.created_at)).not.toBeNaN();
    expect(view.updated_at).toBe(view.created_at);
    const got = await call('GET', `/api/v1/views/${view.id}`, readOnly);
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(view);
    const listed = await call('GET', '/api/v1/views?per_page=100', readOnly);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((v: { id: string }) => v.id)).toContain(view.id);
    expect(listed.body.meta).toMatchObject({ page: 1, per_page: 100 });
    expect(listed.body.meta.total).toBe(listed.body.data.length);
  });

  it('creates, changes and deletes with analytics:write; reads with analytics:read', async () => {
    const body = { name: 'x', query: BY_PROJECT };
    const refused = await call('POST', '/api/v1/views', readOnly, body);
    expect(refused.status).toBe(403);
    expect(refused.body.required_scope).toBe('analytics:write');
    const view = await createView(body, writeOnly);
    const read = await call('GET', `/api/v1/views/${view.id}`, writeOnly);
    expect(read.status).toBe(403);
    expect(read.body.required_scope).toBe('analytics:read');
    for (const [method, path] of [
      ['PUT', `/api/v1/views/${view.id}`],
      ['DELETE', `/api/v1/views/${view.id}`],
      ['POST', `/api/v1/views/${view.id}/embeds`],
    ] as const) {
      const res = await call(
        method,
        path,
        readOnly,
        method === 'PUT' ? body : { expires_in_days: 1 },
      );
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    const master = await call('GET', '/api/v1/views', cairn.master);
    expect(master.status, JSON.stringify(master.body)).toBe(403);
    const anonymous = await call('GET', '/api/v1/views', {});
    expect(anonymous.status).toBe(401);

    const renamed = await call('PUT', `/api/v1/views/${view.id}`, writeOnly, {
      name: 'renamed',
      query: { metrics: ['open_tasks'] },
      prometheus: true,
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({
      id: view.id,
      name: 'renamed',
      prometheus: true,
      created_at: view.created_at,
    });
    expect(renamed.body.data.query.metrics).toEqual(['open_tasks']);
    const deleted = await call('DELETE', `/api/v1/views/${view.id}`, writeOnly);
    expect(deleted.status).toBe(204);
    const gone = await call('GET', `/api/v1/views/${view.id}`, readOnly);
    expect(gone.status).toBe(404);
    expect(gone.body.detail).toBe(`View ${view.id} does not exist.`);
  });

  it("answers a view of other businesses as one that does not exist, and lists only the caller's", async () => {
    const ofGlobex = await createView({ name: 'globex', query: BY_PROJECT }, globex);
    expect(ofGlobex.businesses).toEqual(['globex']);
    expect(ofGlobex.business).toBeUndefined();
    const ofBoth = await createView({ name: 'both', query: BY_PROJECT }, both);
    expect(ofBoth.businesses).toEqual(['acme', 'globex']);
    const missing = 'view_0123456789abcdef';
    const nowhere = await call('GET', `/api/v1/views/${missing}`, cairn.auth);
    for (const id of [ofGlobex.id, ofBoth.id]) {
      for (const [method, path] of [
        ['GET', `/api/v1/views/${id}`],
        ['GET', `/api/v1/views/${id}/answer`],
        ['GET', `/api/v1/views/${id}/embeds`],
        ['PUT', `/api/v1/views/${id}`],
        ['DELETE', `/api/v1/views/${id}`],
        ['POST', `/api/v1/views/${id}/embeds`],
      ] as const) {
        const body =
          method === 'PUT'
            ? { name: 'mine now', query: BY_PROJECT }
            : method === 'POST'
              ? { expires_in_days: 1 }
              : undefined;
        const res = await call(method, path, cairn.auth, body);
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.body.detail).toBe(nowhere.body.detail.replace(missing, id));
      }
    }
    const acmeList = await call('GET', '/api/v1/views?per_page=100', cairn.auth);
    const acmeIds = acmeList.body.data.map((v: { id: string }) => v.id);
    expect(acmeIds).not.toContain(ofGlobex.id);
    expect(acmeIds).not.toContain(ofBoth.id);
    const bothList = await call('GET', '/api/v1/views?per_page=100', both);
    const bothIds = bothList.body.data.map((v: { id: string }) => v.id);
    expect(bothIds).toEqual(expect.arrayContaining([ofGlobex.id, ofBoth.id, ...acmeIds]));
    // A query naming a business the token cannot read: the 404 of /query.
    const other = await call('POST', '/api/v1/views', cairn.auth, {
      name: 'x',
      query: { ...BY_PROJECT, business: 'globex' },
    });
    const byQuery = await call('POST', '/api/v1/query', cairn.auth, {
      ...BY_PROJECT,
      business: 'globex',
    });
    expect(other.status).toBe(404);
    expect(other.body.detail).toBe(byQuery.body.detail);
    expect(other.body.businesses).toEqual(['acme']);
  });

  it.each([
    ['an unknown metric', { metrics: ['nope'] }],
    ['a member /query does not take', { metrics: ['tasks_created'], colour: 'red' }],
    [
      'order by what is not requested',
      { metrics: ['tasks_created'], order_by: [{ field: 'project' }] },
    ],
    ['a zone the parser does not know', { metrics: ['tasks_created'], timezone: 'Mars/Olympus' }],
    [
      'compare over all_time',
      { metrics: ['tasks_created'], period: 'all_time', compare: 'previous_period' },
    ],
  ])('refuses %s with the 422 /query gives, under body.query', async (_, query) => {
    const byQuery = await call('POST', '/api/v1/query', cairn.auth, query);
    const byView = await call('POST', '/api/v1/views', cairn.auth, { name: 'bad', query });
    expect(byQuery.status).toBe(422);
    expect(byView.status).toBe(422);
    const moved = byQuery.body.detail.map((issue: { loc: unknown[] }) => ({
      ...issue,
      loc: ['body', 'query', ...issue.loc.slice(1)],
    }));
    expect(byView.body.detail).toEqual(moved);
  });

  it('answers a view now as the GET form of /query does, with its ETag and a 304', async () => {
    const query = { ...BY_PROJECT, business: 'acme' };
    const view = await createView({ name: 'answer', query });
    const byView = await call('GET', `/api/v1/views/${view.id}/answer`, readOnly);
    const byQuery = await call(
      'GET',
      `/api/v1/query?q=${encodeURIComponent(JSON.stringify(query))}`,
      readOnly,
    );
    expect(byView.status).toBe(200);
    expect(stable(byView.body)).toEqual(stable(byQuery.body));
    const etag = byView.headers.get('etag');
    expect(etag).toBe(byQuery.headers.get('etag'));
    expect(byView.headers.get('cache-control')).toBe('private, no-cache');
    const again = await call('GET', `/api/v1/views/${view.id}/answer`, {
      ...readOnly,
      'If-None-Match': etag as string,
    });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });

  describe('embeds', () => {
    let view: any;
    beforeAll(async () => {
      view = await createView({ name: 'embedded', query: { ...BY_PROJECT, business: 'acme' } });
    });

    it('issues a token once, lists embeds without it, and answers with the locked filters', async () => {
      const missing = await call('POST', `/api/v1/views/${view.id}/embeds`, cairn.auth, {});
      expect(missing.status).toBe(422);
      expect(missing.body.detail[0]).toMatchObject({
        loc: ['body', 'expires_in_days'],
        type: 'missing',
      });
      for (const days of [0, 366]) {
        const res = await call('POST', `/api/v1/views/${view.id}/embeds`, cairn.auth, {
          expires_in_days: days,
        });
        expect(res.status).toBe(422);
      }
      const locked = [{ dimension: 'project', op: 'eq', values: ['alpha'] }];
      const embed = await createEmbed(view.id, {
        expires_in_days: 30,
        locked_filters: locked,
        allowed_origins: ['https://dash.example.com'],
      });
      expect(embed.embed_token).toMatch(/^cairn_embed_[A-Za-z0-9_-]{43}$/);
      expect(embed.url).toBe(`/embed/${embed.embed_token}`);
      expect(embed.locked_filters).toEqual(locked);
      expect(embed.allowed_origins).toEqual(['https://dash.example.com']);
      const days = (Date.parse(embed.expires_at) - Date.now()) / 86_400_000;
      expect(days).toBeGreaterThan(29.9);
      expect(days).toBeLessThanOrEqual(30);
      const stored = await cairn.db
        .selectFrom('view_embeds')
        .select('token_hash')
        .where('id', '=', embed.id)
        .executeTakeFirstOrThrow();
      expect(stored.token_hash).not.toContain(embed.embed_token);
      expect(stored.token_hash).toMatch(/^[0-9a-f]{64}$/);

      const listed = await call('GET', `/api/v1/views/${view.id}/embeds`, readOnly);
      expect(listed.status).toBe(200);
      expect(listed.text).not.toContain(embed.embed_token);
      expect(listed.body.data).toContainEqual(
        expect.objectContaining({ id: embed.id, state: 'active', revoked_at: null }),
      );

      const answer = await embedAnswer(embed.embed_token);
      expect(answer.status).toBe(200);
      expect(projects(answer)).toEqual(['alpha']);
      expect(answer.body.data.reduce((n: number, r: any) => n + r.tasks_created, 0)).toBe(2);
      // The same numbers as /query with the locked filter added.
      const direct = await call('POST', '/api/v1/query', cairn.auth, {
        ...BY_PROJECT,
        business: 'acme',
        filters: locked,
      });
      expect(answer.body.data).toEqual(direct.body.data);
    });

    it('lets a viewer narrow, never widen: a locked dimension or another member is a 403', async () => {
      const embed = await createEmbed(view.id, {
        expires_in_days: 1,
        locked_filters: [{ any: [{ dimension: 'project', op: 'in', values: ['alpha', 'beta'] }] }],
      });
      const narrowed = await embedAnswer(embed.embed_token, {
        filters: [{ dimension: 'status', op: 'eq', values: ['completed'] }],
      });
      expect(narrowed.status).toBe(200);
      expect(narrowed.body.data).toEqual([]);
      const whole = await embedAnswer(embed.embed_token, { filters: [] });
      expect(projects(whole)).toEqual(['alpha', 'beta']);
      for (const q of [
        { filters: [{ dimension: 'project', op: 'eq', values: ['gamma'] }] },
        { filters: [{ any: [{ dimension: 'project', op: 'not_in', values: ['x'] }] }] },
        { filters: [], business: 'globex' },
        { metrics: ['open_tasks'] },
      ]) {
        const res = await embedAnswer(embed.embed_token, q);
        expect(res.status, JSON.stringify(q)).toBe(403);
        expect(res.headers.get('content-type')).toContain('application/problem+json');
      }
      // Each embed token has a budget of 6 a minute here: a fresh one for the rest.
      const fresh = await createEmbed(view.id, { expires_in_days: 1 });
      const bad = await embedAnswer(fresh.embed_token, { filters: [{ dimension: 'nope' }] });
      expect(bad.status).toBe(422);
      expect(bad.body.detail[0].loc.slice(0, 3)).toEqual(['query', 'q', 'filters']);
    });

    it('revalidates an embed answer with its ETag', async () => {
      const embed = await createEmbed(view.id, { expires_in_days: 1 });
      const first = await embedAnswer(embed.embed_token);
      expect(first.status).toBe(200);
      const etag = first.headers.get('etag') as string;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
      const again = await embedAnswer(embed.embed_token, undefined, { 'If-None-Match': etag });
      expect(again.status).toBe(304);
    });

    it('refuses a revoked, expired or unknown token with a 401, and is no API credential', async () => {
      const embed = await createEmbed(view.id, { expires_in_days: 1 });
      const asBearer = await call('GET', '/api/v1/views', {
        Authorization: `Bearer ${embed.embed_token}`,
      });
      expect(asBearer.status).toBe(401);
      const asQuery = await call(
        'POST',
        '/api/v1/query',
        {
          Authorization: `Bearer ${embed.embed_token}`,
        },
        BY_PROJECT,
      );
      expect(asQuery.status).toBe(401);
      // Nor is an API token an embed token.
      const apiToken = cairn.auth.Authorization.replace('Bearer ', '');
      expect((await embedAnswer(apiToken)).status).toBe(401);
      expect((await embedAnswer(`cairn_embed_${'A'.repeat(43)}`)).status).toBe(401);

      const revoked = await call(
        'DELETE',
        `/api/v1/views/${view.id}/embeds/${embed.id}`,
        cairn.auth,
      );
      expect(revoked.status).toBe(204);
      const after = await embedAnswer(embed.embed_token);
      expect(after.status).toBe(401);
      expect(after.headers.get('content-type')).toContain('application/problem+json');
      expect((await http(cairn.url, 'GET', embed.url)).status).toBe(401);
      const twice = await call('DELETE', `/api/v1/views/${view.id}/embeds/${embed.id}`, cairn.auth);
      expect(twice.status).toBe(404);
      const listed = await call('GET', `/api/v1/views/${view.id}/embeds`, cairn.auth);
      expect(listed.body.data).toContainEqual(
        expect.objectContaining({ id: embed.id, state: 'revoked' }),
      );

      const expiring = await createEmbed(view.id, { expires_in_days: 1 });
      expect((await embedAnswer(expiring.embed_token)).status).toBe(200);
      await cairn.db
        .updateTable('view_embeds')
        .set({ expires_at: new Date(Date.now() - 1000) })
        .where('id', '=', expiring.id)
        .execute();
      expect((await embedAnswer(expiring.embed_token)).status).toBe(401);
    });

    it('serves the chart page with frame-ancestors from allowed_origins', async () => {
      const open = await createEmbed(view.id, {
        expires_in_days: 1,
        allowed_origins: ['https://a.example.com', 'http://127.0.0.1:8081'],
      });
      const closed = await createEmbed(view.id, { expires_in_days: 1 });
      const page = await http(cairn.url, 'GET', open.url);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('x-frame-options')).toBeNull();
      const policy = page.headers.get('content-security-policy') as string;
      expect(policy).toContain('frame-ancestors https://a.example.com http://127.0.0.1:8081');
      expect(policy).toContain("connect-src 'self'");
      expect(policy).toContain("default-src 'none'");
      expect(page.text).not.toContain(open.embed_token);
      const none = await http(cairn.url, 'GET', closed.url);
      expect(none.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      // Every other answer still refuses framing.
      const api = await call('GET', '/api/v1/views', cairn.auth);
      expect(api.headers.get('x-frame-options')).toBe('DENY');
    });

    it('charges an embed token its own budget, and logs and metrics never name it', async () => {
      const spent = await createEmbed(view.id, { expires_in_days: 1 });
      const other = await createEmbed(view.id, { expires_in_days: 1 });
      for (let i = 0; i < 6; i++) {
        const res = await embedAnswer(spent.embed_token);
        expect(res.status).toBe(200);
        expect(res.headers.get('x-ratelimit-limit')).toBe('6');
      }
      const refused = await embedAnswer(spent.embed_token);
      expect(refused.status).toBe(429);
      expect((await embedAnswer(other.embed_token)).status).toBe(200);
      // API tokens keep theirs.
      const api = await call('GET', '/api/v1/views', cairn.auth);
      expect(api.headers.get('x-ratelimit-limit')).toBe('1000');
      const metrics = await fetch(`${cairn.url}/metrics`).then((res) => res.text());
      expect(metrics).toContain('route="/embed/:embed_token/answer"');
      expect(metrics).not.toContain('cairn_embed_');
    });
  });

  it('erasing a business deletes the views that read it, and their embeds', async () => {
    const ofBoth = await createView({ name: 'both', query: BY_PROJECT }, both);
    const ofAcme = await createView(
      { name: 'acme only', query: { ...BY_PROJECT, business: 'acme' } },
      both,
    );
    const embed = await createEmbed(ofAcme.id, { expires_in_days: 1 });
    const bothEmbed = await call('POST', `/api/v1/views/${ofBoth.id}/embeds`, both, {
      expires_in_days: 1,
    });
    expect(bothEmbed.status).toBe(201);
    const started = await call('DELETE', '/api/v1/businesses/globex', cairn.master);
    expect(started.status).toBe(202);
    await waitFor(
      async () => {
        const res = await call('GET', '/api/v1/businesses/globex/erasure', cairn.master);
        return res.body.data?.status === 'done';
      },
      { timeoutMs: 60_000 },
    );
    const left = await cairn.db.selectFrom('views').select('id').execute();
    const ids = left.map((row) => row.id);
    expect(ids).not.toContain(ofBoth.id);
    expect(ids).toContain(ofAcme.id);
    const embeds = await cairn.db
      .selectFrom('view_embeds')
      .select('id')
      .where('id', '=', bothEmbed.body.data.id)
      .execute();
    expect(embeds).toEqual([]);
    expect((await embedAnswer(bothEmbed.body.data.embed_token)).status).toBe(401);
    expect((await embedAnswer(embed.embed_token)).status).toBe(200);
  });

  describe('views as Prometheus gauges on /metrics/views', () => {
    const GAUGES = {
      metrics: ['tasks_created', 'open_tasks'],
      dimensions: ['project'],
      business: 'acme',
      period: 'last_7_days',
    };
    const scrape = (headers: Record<string, string>) => call('GET', '/metrics/views', headers);
    const sample = (text: string, view: string, metric: string, project: string) =>
      new RegExp(
        `^cairn_view_value\\{view="${view}",metric="${metric}",project="${project}"\\} (\\S+)$`,
        'm',
      ).exec(text)?.[1];

    it('serves the prometheus views the caller can see, in a format promtool accepts', async () => {
      const view = await createView({ name: 'gauges', query: GAUGES, prometheus: true });
      const hidden = await createView({ name: 'not scraped', query: GAUGES });
      const res = await scrape(readOnly);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(sample(res.text, view.id, 'tasks_created', 'alpha')).toBe('2');
      expect(sample(res.text, view.id, 'tasks_created', 'beta')).toBe('1');
      expect(sample(res.text, view.id, 'open_tasks', 'alpha')).toBe('2');
      expect(res.text).not.toContain(hidden.id);
      const check = spawnSync('promtool', ['check', 'metrics'], {
        input: res.text,
        encoding: 'utf8',
      });
      expect(check.error).toBeUndefined();
      expect(`${check.stdout}${check.stderr}`.trim()).toBe('');
      expect(check.status).toBe(0);

      const master = await scrape(cairn.master);
      expect(sample(master.text, view.id, 'tasks_created', 'alpha')).toBe('2');
      const other = await cairn.token({ businesses: ['beta-only'], scopes: ['analytics:read'] });
      const foreign = await scrape(other);
      expect(foreign.status).toBe(200);
      expect(foreign.text).not.toContain(view.id);
      expect((await scrape(writeOnly)).status).toBe(403);
      expect((await scrape({})).status).toBe(401);
      // Past the cap (4 here), series are left out: a second such view adds none.
      const second = await createView({ name: 'gauges too', query: GAUGES, prometheus: true });
      const capped = await scrape(readOnly);
      expect(capped.text.match(/^cairn_view_value\{/gm)).toHaveLength(4);
      expect(capped.text).not.toContain(second.id);
      expect((await call('DELETE', `/api/v1/views/${second.id}`, cairn.auth)).status).toBe(204);
      // Its 4 series are the whole cap here: the next test's view needs the room.
      expect((await call('DELETE', `/api/v1/views/${view.id}`, cairn.auth)).status).toBe(204);
      expect((await scrape(readOnly)).text).not.toContain(view.id);
    });

    it('refuses a gauge view whose answer has more series than the scrape serves', async () => {
      const wide = { ...GAUGES, metrics: [...GAUGES.metrics, 'tasks_completed'] };
      const refused = await call('POST', '/api/v1/views', cairn.auth, {
        name: 'too wide',
        query: wide,
        prometheus: true,
      });
      expect(refused.status).toBe(422);
      expect(refused.body.detail[0].loc).toEqual(['body', 'prometheus']);
      expect(refused.body.detail[0].msg).toContain('has 6 series now');
      // The same view is saved without the flag, and refused the flag afterwards.
      const plain = await createView({ name: 'wide', query: wide });
      const flagged = await call('PUT', `/api/v1/views/${plain.id}`, cairn.auth, {
        name: 'wide',
        query: wide,
        prometheus: true,
      });
      expect(flagged.status).toBe(422);
      expect(flagged.body.detail[0].loc).toEqual(['body', 'prometheus']);
      expect((await call('DELETE', `/api/v1/views/${plain.id}`, cairn.auth)).status).toBe(204);
    });

    it('answers a view at most once per interval, and anew once it changes', async () => {
      const view = await createView({ name: 'kept', query: GAUGES, prometheus: true });
      expect(sample((await scrape(readOnly)).text, view.id, 'tasks_created', 'alpha')).toBe('2');
      const created = await call('POST', '/api/v1/tasks', both, {
        business: 'acme',
        name: 'one more',
        project: 'alpha',
      });
      expect(created.status).toBe(201);
      await waitFor(
        async () => {
          const res = await call('POST', '/api/v1/query', cairn.auth, GAUGES);
          return res.body.data.find((r: any) => r.project === 'alpha')?.tasks_created === 3;
        },
        { timeoutMs: 60_000 },
      );
      expect(sample((await scrape(readOnly)).text, view.id, 'tasks_created', 'alpha')).toBe('2');
      const changed = await call('PUT', `/api/v1/views/${view.id}`, cairn.auth, {
        name: 'kept, renamed',
        query: GAUGES,
        prometheus: true,
      });
      expect(changed.status).toBe(200);
      expect(sample((await scrape(readOnly)).text, view.id, 'tasks_created', 'alpha')).toBe('3');
    });
  });
});
