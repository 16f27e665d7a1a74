import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';

describe('task dependencies', () => {
  const cairn = useCairn({ businesses: ['acme', 'globex'] });

  const create = async (name: string, business = 'acme') => {
    const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
      body: { business, name },
      headers: cairn.auth,
    });
    return res.body.data.gid as string;
  };
  const depend = (gid: string, dependencies: string[], headers = cairn.auth) =>
    http(cairn.url, 'POST', `/api/v1/tasks/${gid}/dependencies`, {
      body: { dependencies },
      headers,
    });
  const gids = async (gid: string, listing: 'dependents' | 'dependencies') => {
    const res = await http(cairn.url, 'GET', `/api/v1/tasks/${gid}/${listing}`, {
      headers: cairn.auth,
    });
    expect(res.status).toBe(200);
    return res.body.data.map((t: { gid: string }) => t.gid);
  };
  const factKinds = async (gid: string) =>
    (
      await cairn.db
        .selectFrom('outbox')
        .select(['kind', 'payload'])
        .where('task_gid', '=', gid)
        .orderBy('id')
        .execute()
    ).map((f) => [f.kind, f.payload.dependency_gid ?? null]);

  it('adds edges in both listings, treats an existing edge as a no-op, and records facts', async () => {
    const [t, a, b] = [await create('t'), await create('a'), await create('b')];
    const res = await depend(t, [a, b]);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ gid: t, resource_type: 'task', name: 't' });
    expect(await gids(t, 'dependencies')).toEqual([a, b]);
    expect(await gids(a, 'dependents')).toEqual([t]);
    expect((await depend(t, [b, a])).status).toBe(200);
    expect(await gids(t, 'dependencies')).toEqual([a, b]);
    expect(await factKinds(t)).toEqual([
      ['task_created', null],
      ['dependency_added', a],
      ['dependency_added', b],
    ]);
    const removed = await http(cairn.url, 'DELETE', `/api/v1/tasks/${t}/dependencies/${a}`, {
      headers: cairn.auth,
    });
    expect(removed.status).toBe(204);
    expect(await gids(t, 'dependencies')).toEqual([b]);
    expect((await factKinds(t)).at(-1)).toEqual(['dependency_removed', a]);
    const gone = await http(cairn.url, 'DELETE', `/api/v1/tasks/${t}/dependencies/${a}`, {
      headers: cairn.auth,
    });
    expect(gone.status).toBe(404);
  });

  it('refuses a cycle with a 409 naming its path, all or nothing', async () => {
    const [a, b, c, d] = [
      await create('a'),
      await create('b'),
      await create('c'),
      await create('d'),
    ];
    expect((await depend(a, [b])).status).toBe(200);
    expect((await depend(b, [c])).status).toBe(200);
    const res = await depend(c, [d, a]);
    expect(res.status).toBe(409);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body.cycle).toEqual([c, a, b, c]);
    expect(res.body.detail).toContain(`${c} → ${a} → ${b} → ${c}`);
    // Nothing of the request stayed, not even the harmless edge to d.
    expect(await gids(c, 'dependencies')).toEqual([]);
    expect((await factKinds(c)).map(([kind]) => kind)).toEqual(['task_created']);
  });

  it('answers unknown and hidden dependencies with 404, self and cross-business with 422 at their body loc', async () => {
    const t = await create('t');
    const other = await create('other', 'globex');
    const hidden = await http(cairn.url, 'POST', '/api/v1/tasks', {
      body: { business: 'initech', name: 'hidden' },
      headers: await cairn.token({ businesses: ['initech'] }),
    });
    const missing = '00000000-0000-4000-8000-000000000000';
    for (const absent of [missing, hidden.body.data.gid]) {
      const res = await depend(t, [t, absent]);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body.detail).toBe(`Task ${absent} does not exist.`);
      expect(res.body.errors).toEqual([
        { field: 'dependencies[1]', code: 'not_found', message: `Task ${absent} does not exist.` },
      ]);
    }
    const res = await depend(t, [t, other]);
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      {
        loc: ['body', 'dependencies', 0],
        msg: 'A task cannot depend on itself',
        type: 'value_error',
      },
      expect.objectContaining({ loc: ['body', 'dependencies', 1], type: 'value_error' }),
    ]);
    expect(await gids(t, 'dependencies')).toEqual([]);
    const shapes = await Promise.all([
      depend(t, []),
      depend(t, ['bad gid!']),
      http(cairn.url, 'POST', `/api/v1/tasks/${t}/dependencies`, { body: {}, headers: cairn.auth }),
      http(cairn.url, 'POST', `/api/v1/tasks/${t}/dependencies`, {
        body: { dependencies: [t], extra: 1 },
        headers: cairn.auth,
      }),
    ]);
    expect(shapes.map((r) => [r.status, r.body.detail[0].loc, r.body.detail[0].type])).toEqual([
      [422, ['body', 'dependencies'], 'too_short'],
      [422, ['body', 'dependencies', 0], 'string_pattern_mismatch'],
      [422, ['body', 'dependencies'], 'missing'],
      [422, ['body', 'extra'], 'extra_forbidden'],
    ]);
    const unknownTask = await depend(missing, [t]);
    expect(unknownTask.status).toBe(404);
    const unknownEdge = await http(
      cairn.url,
      'DELETE',
      `/api/v1/tasks/${t}/dependencies/${missing}`,
      {
        headers: cairn.auth,
      },
    );
    expect(unknownEdge.status).toBe(404);
    const badPath = await http(cairn.url, 'DELETE', `/api/v1/tasks/${t}/dependencies/bad!gid`, {
      headers: cairn.auth,
    });
    expect(badPath.body.detail[0]).toMatchObject({ loc: ['path', 'dependency_gid'] });
  });

  it('checks a chain 10,000 deep for cycles', async () => {
    const db = cairn.db;
    const depth = 10_000;
    // Built in SQL: 10,000 HTTP calls would only measure HTTP.
    await sql`insert into tasks (gid, business, name)
      select 'chain-' || i, 'acme', 'link ' || i from generate_series(0, ${depth}) as i`.execute(
      db,
    );
    await sql`insert into task_dependencies (task_gid, dependency_gid, business)
      select 'chain-' || i, 'chain-' || (i + 1), 'acme' from generate_series(0, ${depth - 1}) as i
      order by i`.execute(db);
    // chain-0 depends on … on chain-10000; chain-10000 depending on chain-0 closes the loop.
    const res = await depend(`chain-${depth}`, ['chain-0']);
    expect(res.status).toBe(409);
    expect(res.body.cycle).toHaveLength(depth + 2);
    expect(res.body.cycle.slice(0, 3)).toEqual([`chain-${depth}`, 'chain-0', 'chain-1']);
    expect(res.body.cycle.at(-1)).toBe(`chain-${depth}`);
    // The other direction adds no cycle and passes the same walk.
    const head = await create('head');
    expect((await depend('chain-0', [head])).status).toBe(200);
    expect((await depend(`chain-${depth}`, [await create('tail')])).status).toBe(200);
  });
});
