import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../apps/server/cairn.ts';
import { authHeader } from './support/auth.ts';
import { type TestConfig, testConfig } from './support/engines.ts';
import { http } from './support/http.ts';

describe('GET /api/v1/tasks/{gid}/dependents', () => {
  let setup: TestConfig;
  let cairn: Cairn;
  let base: string;
  let auth: Record<string, string>;
  let root: string;
  let other: string;
  const dependents: string[] = [];
  beforeAll(async () => {
    setup = await testConfig();
    cairn = await startCairn({ config: setup.config });
    base = cairn.url;
    auth = await authHeader(cairn, { businesses: ['acme'] });
    const create = async (name: string) =>
      (
        await http(base, 'POST', '/api/v1/tasks', {
          body: { business: 'acme', name },
          headers: auth,
        })
      ).body.data.gid as string;
    root = await create('root');
    other = await create('other');
    // Added in a shuffled gid order: the listing follows the order edges were added, not gids.
    const db = cairn.engines.postgres.db;
    await sql`insert into tasks (gid, business, name, status)
      select 'dep-' || lpad(((i * 7919) % 250)::text, 3, '0'), 'acme', 'dependent ' || i, 'in_progress'
      from generate_series(0, 249) as i`.execute(db);
    for (let i = 0; i < 250; i++)
      dependents.push(`dep-${String((i * 7919) % 250).padStart(3, '0')}`);
    await sql`insert into task_dependencies (task_gid, dependency_gid, business)
      select 'dep-' || lpad(((i * 7919) % 250)::text, 3, '0'), ${root}, 'acme'
      from generate_series(0, 249) as i order by i`.execute(db);
    await http(base, 'POST', `/api/v1/tasks/${other}/dependencies`, {
      body: { dependencies: [root] },
      headers: auth,
    });
    dependents.push(other);
  });
  afterAll(async () => {
    await cairn.close();
    await setup.cleanup();
  });

  const page = (query: string, gid = root) =>
    http(base, 'GET', `/api/v1/tasks/${gid}/dependents${query}`, { headers: auth });

  it('defaults to 100 per page and walks every dependent once, in the order edges were added', async () => {
    const first = await page('');
    expect(first.status).toBe(200);
    expect(first.body.pagination).toEqual({
      limit: 100,
      has_more: true,
      next_offset: expect.any(String),
    });
    expect(first.body.meta.request_id).toBe(first.headers.get('x-request-id'));
    expect(first.body.data[0]).toEqual({
      gid: dependents[0],
      resource_type: 'task',
      name: 'dependent 0',
    });
    const seen: string[] = first.body.data.map((t: { gid: string }) => t.gid);
    let next = first.body.pagination.next_offset;
    let pages = 1;
    while (next) {
      const res = await page(`?offset=${encodeURIComponent(next)}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((t: { gid: string }) => t.gid));
      next = res.body.pagination.next_offset;
      pages++;
      if (!res.body.pagination.has_more) expect(next).toBeNull();
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(dependents);
  });

  it('reports the limit asked for and ends with has_more false and next_offset null', async () => {
    const res = await page('?limit=7');
    expect(res.body.data).toHaveLength(7);
    expect(res.body.pagination.limit).toBe(7);
    const leaf = await page('?limit=5', other);
    expect(leaf.body).toMatchObject({
      data: [],
      pagination: { limit: 5, has_more: false, next_offset: null },
    });
    const exact = await page(`?limit=1&offset=${encodeURIComponent(await cursorBefore(1))}`);
    expect(exact.body.data.map((t: { gid: string }) => t.gid)).toEqual([other]);
    expect(exact.body.pagination).toEqual({ limit: 1, has_more: false, next_offset: null });
  });

  /** The cursor after all but the last `remaining` dependents (251 in all), 50 a page. */
  async function cursorBefore(remaining: number): Promise<string> {
    let cursor = '';
    for (let seen = 0; seen < dependents.length - remaining; seen += 50) {
      const res = await page(`?limit=50${cursor ? `&offset=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.body.pagination.has_more).toBe(true);
      cursor = res.body.pagination.next_offset;
    }
    return cursor;
  }

  it('adds task members named in opt_fields and refuses unknown ones', async () => {
    const res = await page('?limit=1&opt_fields=status,due_on,created_at');
    expect(res.body.data[0]).toEqual({
      gid: dependents[0],
      resource_type: 'task',
      name: 'dependent 0',
      status: 'in_progress',
      due_on: null,
      created_at: expect.any(String),
    });
    const bad = await page('?opt_fields=status,secret');
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toEqual([
      expect.objectContaining({ loc: ['query', 'opt_fields'], type: 'enum' }),
    ]);
  });

  it('answers a bad limit or unknown parameter with the validation body', async () => {
    for (const [query, type, loc] of [
      ['?limit=0', 'greater_than_equal', 'limit'],
      ['?limit=101', 'less_than_equal', 'limit'],
      ['?limit=abc', 'int_parsing', 'limit'],
      ['?page=2', 'extra_forbidden', 'page'],
    ]) {
      const res = await page(query!);
      expect(res.status, query).toBe(422);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body.detail).toEqual([expect.objectContaining({ loc: ['query', loc], type })]);
    }
    const path = await http(base, 'GET', '/api/v1/tasks/no!pe/dependents', { headers: auth });
    expect(path.body.detail[0]).toMatchObject({ loc: ['path', 'gid'] });
  });

  it("refuses a tampered, garbled, foreign or other listing's cursor at query.offset", async () => {
    const cursor: string = (await page('?limit=3')).body.pagination.next_offset;
    const [version, payload, mac] = cursor.split('.') as [string, string, string];
    const forged = Buffer.from(JSON.stringify(['dependents', root, 200])).toString('base64url');
    const otherTask = (
      await http(base, 'GET', `/api/v1/tasks/${dependents[0]}/dependencies`, {
        headers: auth,
      })
    ).body;
    expect(otherTask.data.map((t: { gid: string }) => t.gid)).toEqual([root]);
    const dependenciesCursor = (
      await http(base, 'GET', `/api/v1/tasks/${dependents[0]}/dependents?limit=1`, {
        headers: auth,
      })
    ).body.pagination.next_offset;
    expect(dependenciesCursor).toBeNull();
    const foreign = (await page('?limit=1', root)).body.pagination.next_offset as string;
    for (const bad of [
      'garbage',
      `${version}.${payload}`,
      `${version}.${forged}.${mac}`,
      `${version}.${payload}.${mac.slice(0, -2)}AA`,
      `c9.${payload}.${mac}`,
      `${cursor}.extra`,
    ]) {
      const res = await page(`?offset=${encodeURIComponent(bad)}`);
      expect(res.status, bad).toBe(422);
      expect(res.body.detail).toEqual([
        expect.objectContaining({ loc: ['query', 'offset'], type: 'value_error' }),
      ]);
    }
    // A genuine cursor, but for another task, or for the other listing of the same task.
    const elsewhere = await page(`?offset=${encodeURIComponent(foreign)}`, other);
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.body.detail[0].loc).toEqual(['query', 'offset']);
    const crossListing = await http(
      base,
      'GET',
      `/api/v1/tasks/${root}/dependencies?offset=${encodeURIComponent(foreign)}`,
      { headers: auth },
    );
    expect(crossListing.status).toBe(422);
    expect(crossListing.body.detail[0].loc).toEqual(['query', 'offset']);
  });

  it('lists every bad query member in one answer', async () => {
    const res = await page('?limit=0&offset=garbage&opt_fields=status,colour');
    expect(res.status).toBe(422);
    expect(res.body.detail.map((issue: { loc: string[] }) => issue.loc.join('.')).sort()).toEqual([
      'query.limit',
      'query.offset',
      'query.opt_fields',
    ]);
  });

  it('answers an unknown or hidden task with 404', async () => {
    expect((await page('', '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    const stranger = await authHeader(cairn, { businesses: ['globex'] });
    const hidden = await http(base, 'GET', `/api/v1/tasks/${root}/dependents`, {
      headers: stranger,
    });
    expect(hidden.status).toBe(404);
  });
});
