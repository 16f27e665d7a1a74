import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { edgePage } from '../../libs/tasks/dependency.repository.ts';
import { useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';

describe('GET /api/v1/tasks/{gid}/dependents', () => {
  let root: string;
  let other: string;
  const dependents: string[] = [];
  const cairn = useCairn({ businesses: ['acme'] });
  beforeAll(async () => {
    const create = async (name: string) =>
      (
        await http(cairn.url, 'POST', '/api/v1/tasks', {
          body: { business: 'acme', name },
          headers: cairn.auth,
        })
      ).body.data.gid as string;
    root = await create('root');
    other = await create('other');
    // Added in a shuffled gid order: the listing follows the order edges were added, not gids.
    const db = cairn.db;
    await sql`insert into tasks (gid, business, name, status)
      select 'dep-' || lpad(((i * 7919) % 250)::text, 3, '0'), 'acme', 'dependent ' || i, 'in_progress'
      from generate_series(0, 249) as i`.execute(db);
    for (let i = 0; i < 250; i++)
      dependents.push(`dep-${String((i * 7919) % 250).padStart(3, '0')}`);
    await sql`insert into task_dependencies (task_gid, dependency_gid, business)
      select 'dep-' || lpad(((i * 7919) % 250)::text, 3, '0'), ${root}, 'acme'
      from generate_series(0, 249) as i order by i`.execute(db);
    await http(cairn.url, 'POST', `/api/v1/tasks/${other}/dependencies`, {
      body: { dependencies: [root] },
      headers: cairn.auth,
    });
    dependents.push(other);
  });

  const page = (query: string, gid = root) =>
    http(cairn.url, 'GET', `/api/v1/tasks/${gid}/dependents${query}`, { headers: cairn.auth });

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
    const path = await http(cairn.url, 'GET', '/api/v1/tasks/no!pe/dependents', {
      headers: cairn.auth,
    });
    expect(path.body.detail[0]).toMatchObject({ loc: ['path', 'gid'] });
  });

  it("refuses a tampered, garbled, foreign or other listing's cursor at query.offset", async () => {
    const cursor: string = (await page('?limit=3')).body.pagination.next_offset;
    const [version, payload] = cursor.split('.') as [string, string];
    const sealed = Buffer.from(payload, 'base64url');
    // One bit flipped in the ciphertext, in the tag, and a cursor cut short.
    const flipped = (at: number) => {
      const copy = Buffer.from(sealed);
      copy[at] = (copy[at] as number) ^ 1;
      return `${version}.${copy.toString('base64url')}`;
    };
    // The old signed, readable form is no longer accepted.
    const legacy = `c1.${Buffer.from(JSON.stringify(['dependents', root, 200])).toString('base64url')}.AAAA`;
    const otherTask = (
      await http(cairn.url, 'GET', `/api/v1/tasks/${dependents[0]}/dependencies`, {
        headers: cairn.auth,
      })
    ).body;
    expect(otherTask.data.map((t: { gid: string }) => t.gid)).toEqual([root]);
    const dependenciesCursor = (
      await http(cairn.url, 'GET', `/api/v1/tasks/${dependents[0]}/dependents?limit=1`, {
        headers: cairn.auth,
      })
    ).body.pagination.next_offset;
    expect(dependenciesCursor).toBeNull();
    const foreign = (await page('?limit=1', root)).body.pagination.next_offset as string;
    for (const bad of [
      'garbage',
      `${version}.`,
      flipped(14),
      flipped(sealed.length - 1),
      `${version}.${sealed.subarray(0, sealed.length - 1).toString('base64url')}`,
      `c9.${payload}`,
      legacy,
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
      cairn.url,
      'GET',
      `/api/v1/tasks/${root}/dependencies?offset=${encodeURIComponent(foreign)}`,
      { headers: cairn.auth },
    );
    expect(crossListing.status).toBe(422);
    expect(crossListing.body.detail[0].loc).toEqual(['query', 'offset']);
  });

  it('keeps the position secret: a cursor does not show the edge id it names', async () => {
    const first: string = (await page('?limit=1')).body.pagination.next_offset;
    const second: string = (await page('?limit=1')).body.pagination.next_offset;
    // Sealed afresh each time (random nonce), so two cursors for one position differ…
    expect(first).not.toBe(second);
    // …and neither carries readable JSON or digits of the position.
    const bytes = Buffer.from(first.split('.')[1] as string, 'base64url').toString('latin1');
    expect(bytes).not.toContain(root);
    expect(bytes).not.toContain('dependents');
    // Both page on to the same place.
    const [a, b] = await Promise.all([
      page(`?limit=1&offset=${encodeURIComponent(first)}`),
      page(`?limit=1&offset=${encodeURIComponent(second)}`),
    ]);
    expect(a.body.data).toEqual(b.body.data);
  });

  it('reads no page of a task the caller may not see: the permission is in the page query', async () => {
    const base = { afterId: 0, limit: 10, columns: [] as const };
    const seen = await edgePage(cairn.db, 'dependents', root, { ...base, businesses: ['acme'] });
    expect(seen.business).toBe('acme');
    expect(seen.rows.length).toBe(10);
    const hidden = await edgePage(cairn.db, 'dependents', root, {
      ...base,
      businesses: ['umbrella'],
    });
    expect(hidden).toEqual({ business: undefined, rows: [] });
    const missing = await edgePage(cairn.db, 'dependents', 'no-such-task', {
      ...base,
      businesses: ['acme'],
    });
    expect(missing).toEqual(hidden);
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
    const stranger = await cairn.token({ businesses: ['globex'] });
    const hidden = await http(cairn.url, 'GET', `/api/v1/tasks/${root}/dependents`, {
      headers: stranger,
    });
    expect(hidden.status).toBe(404);
  });
});
