import { describe, expect, it } from 'vitest';
import { unlimited, useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';

/** Entity tags on task answers: If-None-Match on reads, If-Match on writes. */
describe('task ETags and conditional requests', () => {
  const cairn = useCairn({ rateLimits: unlimited(), businesses: ['acme'] });

  const create = async (name: string) => {
    const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
      body: { business: 'acme', name },
      headers: cairn.auth,
    });
    expect(res.status).toBe(201);
    return { gid: res.body.data.gid as string, etag: res.headers.get('etag') as string };
  };
  const put = (gid: string, body: object, headers: Record<string, string> = {}) =>
    http(cairn.url, 'PUT', `/api/v1/tasks/${gid}`, {
      body,
      headers: { ...cairn.auth, ...headers },
    });
  const get = (gid: string, headers: Record<string, string> = {}, query = '') =>
    http(cairn.url, 'GET', `/api/v1/tasks/${gid}${query}`, {
      headers: { ...cairn.auth, ...headers },
    });
  const factCount = async (gid: string) =>
    (await cairn.db.selectFrom('outbox').select('id').where('task_gid', '=', gid).execute()).length;

  it('tags every task answer with its version, raised only by a change', async () => {
    const { gid, etag } = await create('Tagged');
    expect(etag).toBe('"1"');
    expect((await get(gid)).headers.get('etag')).toBe('"1"');
    const changed = await put(gid, { name: 'Tagged again' });
    expect(changed.headers.get('etag')).toBe('"2"');
    const same = await put(gid, { name: 'Tagged again' });
    expect(same.status).toBe(200);
    expect(same.headers.get('etag')).toBe('"2"');
    const other = await create('Other');
    const linked = await http(cairn.url, 'POST', `/api/v1/tasks/${gid}/dependencies`, {
      body: { dependencies: [other.gid] },
      headers: cairn.auth,
    });
    expect(linked.status).toBe(200);
    expect(linked.headers.get('etag')).toBe('"2"');
  });

  it('answers If-None-Match with 304 while the version is current', async () => {
    const { gid, etag } = await create('Cached');
    for (const header of [etag, '*', `"9", ${etag}`, `W/${etag}`]) {
      const res = await get(gid, { 'If-None-Match': header });
      expect(res.status, header).toBe(304);
      expect(res.text).toBe('');
      expect(res.headers.get('etag')).toBe(etag);
    }
    expect((await get(gid, { 'If-None-Match': etag }, '?opt_fields=status')).status).toBe(304);
    await put(gid, { status: 'in_progress' });
    const stale = await get(gid, { 'If-None-Match': etag });
    expect(stale.status).toBe(200);
    expect(stale.body.data.status).toBe('in_progress');
    expect(stale.headers.get('etag')).toBe('"2"');
  });

  it('writes only the version If-Match names; otherwise 412 and nothing changes', async () => {
    const { gid } = await create('Guarded');
    const first = await put(gid, { name: 'v2' }, { 'If-Match': '"1"' });
    expect(first.status).toBe(200);
    const facts = await factCount(gid);
    for (const header of ['"1"', 'W/"2"', '"1", "3"']) {
      const stale = await put(gid, { name: 'lost' }, { 'If-Match': header });
      expect(stale.status, header).toBe(412);
      expect(stale.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(stale.body).toMatchObject({ status: 412, title: 'Precondition Failed' });
      expect(stale.headers.get('etag')).toBe('"2"');
    }
    expect((await get(gid)).body.data.name).toBe('v2');
    expect(await factCount(gid)).toBe(facts);
    expect((await put(gid, { name: 'v3' }, { 'If-Match': '"7", "2"' })).status).toBe(200);
    expect((await put(gid, { name: 'v4' }, { 'If-Match': '*' })).status).toBe(200);
    const malformed = await put(gid, { name: 'v5' }, { 'If-Match': '4' });
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('deletes only the version If-Match names', async () => {
    const { gid } = await create('Doomed');
    await put(gid, { name: 'Doomed, renamed' });
    const del = (ifMatch: string) =>
      http(cairn.url, 'DELETE', `/api/v1/tasks/${gid}`, {
        headers: { ...cairn.auth, 'If-Match': ifMatch },
      });
    expect((await del('"1"')).status).toBe(412);
    expect((await get(gid)).status).toBe(200);
    expect((await del('"2"')).status).toBe(204);
    expect((await get(gid)).status).toBe(404);
    expect((await del('"2"')).status).toBe(404);
  });

  it('lets exactly one of several concurrent PUTs with the same If-Match win', async () => {
    for (let round = 0; round < 5; round++) {
      const { gid, etag } = await create(`Contested ${round}`);
      const writers = round === 0 ? 8 : 2;
      const answers = await Promise.all(
        Array.from({ length: writers }, (_, i) =>
          put(gid, { name: `writer ${i}` }, { 'If-Match': etag }),
        ),
      );
      const statuses = answers.map((res) => res.status);
      expect(
        statuses.filter((status) => status === 200),
        statuses.join(),
      ).toHaveLength(1);
      expect(statuses.filter((status) => status === 412)).toHaveLength(writers - 1);
      const winner = answers.find((res) => res.status === 200)!;
      const now = await get(gid);
      expect(now.body.data.name).toBe(winner.body.data.name);
      expect(now.headers.get('etag')).toBe('"2"');
      // One task_created and one task_updated: the losers wrote nothing.
      expect(await factCount(gid)).toBe(2);
    }
  });
});
