import { describe, expect, it } from 'vitest';
import { useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';

describe('tasks: create, read, update, delete', () => {
  const cairn = useCairn({ businesses: ['acme', 'globex'] });

  const create = async (body: Record<string, unknown>, headers = cairn.auth) => {
    const res = await http(cairn.url, 'POST', '/api/v1/tasks', { body, headers });
    expect(res.status).toBe(201);
    return res.body.data;
  };
  const factsOf = async (gid: string) =>
    cairn.db
      .selectFrom('outbox')
      .select(['kind', 'business', 'payload'])
      .where('task_gid', '=', gid)
      .orderBy('id')
      .execute();

  it('creates a task with a server-side UUID and every member', async () => {
    const task = await create({ business: 'acme', name: 'Plan', project: 'alpha' });
    expect(task).toEqual({
      gid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      resource_type: 'task',
      name: 'Plan',
      business: 'acme',
      project: 'alpha',
      assignee: null,
      status: 'open',
      due_on: null,
      created_at: expect.any(String),
      updated_at: task.created_at,
      completed_at: null,
    });
    expect((await factsOf(task.gid)).map((f) => f.kind)).toEqual(['task_created']);
  });

  it('updates only the members sent and records the status transition', async () => {
    const task = await create({ business: 'acme', name: 'Write', assignee: 'ann' });
    const res = await http(cairn.url, 'PUT', `/api/v1/tasks/${task.gid}`, {
      body: { status: 'completed', due_on: '2026-12-01' },
      headers: cairn.auth,
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      gid: task.gid,
      name: 'Write',
      assignee: 'ann',
      status: 'completed',
      due_on: '2026-12-01',
      completed_at: expect.any(String),
    });
    const facts = await factsOf(task.gid);
    expect(facts.map((f) => f.kind)).toEqual(['task_created', 'task_updated', 'task_completed']);
    expect(facts[1]!.payload).toMatchObject({ previous_status: 'open', status: 'completed' });
    const reopened = await http(cairn.url, 'PUT', `/api/v1/tasks/${task.gid}`, {
      body: { status: 'in_progress', assignee: null },
      headers: cairn.auth,
    });
    expect(reopened.body.data).toMatchObject({ status: 'in_progress', completed_at: null });
    expect(reopened.body.data.assignee).toBeNull();
    const after = await factsOf(task.gid);
    expect(after.at(-1)!.payload).toMatchObject({
      previous_status: 'completed',
      status: 'in_progress',
    });
    // Sending the same values again changes nothing and writes no fact.
    const same = await http(cairn.url, 'PUT', `/api/v1/tasks/${task.gid}`, {
      body: { status: 'in_progress' },
      headers: cairn.auth,
    });
    expect(same.status).toBe(200);
    expect(await factsOf(task.gid)).toHaveLength(after.length);
  });

  it('validates each PUT member and refuses a business change', async () => {
    const task = await create({ business: 'acme', name: 'Check' });
    const res = await http(cairn.url, 'PUT', `/api/v1/tasks/${task.gid}`, {
      body: { status: 'done', name: '', due_on: 'soon', colour: 'red' },
      headers: cairn.auth,
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ loc: ['body', 'status'], type: 'enum' }),
        expect.objectContaining({ loc: ['body', 'name'], type: 'string_too_short' }),
        expect.objectContaining({ loc: ['body', 'due_on'], type: 'date_parsing' }),
        expect.objectContaining({ loc: ['body', 'colour'], type: 'extra_forbidden' }),
      ]),
    );
    const long = await http(cairn.url, 'PUT', `/api/v1/tasks/${task.gid}`, {
      body: { name: 'x'.repeat(501) },
      headers: cairn.auth,
    });
    expect(long.body.detail[0]).toMatchObject({ loc: ['body', 'name'], type: 'string_too_long' });
    // Postgres text cannot hold U+0000: refused at its place, not failed in the write.
    const nul = await http(cairn.url, 'PUT', `/api/v1/tasks/${task.gid}`, {
      body: { name: 'a\u0000b', project: 'fine' },
      headers: cairn.auth,
    });
    expect(nul.status).toBe(422);
    expect(nul.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'name'], type: 'string_nul' }),
    ]);
    const moved = await http(cairn.url, 'PUT', `/api/v1/tasks/${task.gid}`, {
      body: { business: 'globex', name: 'Moved' },
      headers: cairn.auth,
    });
    expect(moved.status).toBe(422);
    expect(moved.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'business'], type: 'value_error' }),
    ]);
    // Nothing to change is a property of the body: refused before the task is looked up.
    const nothing = await http(cairn.url, 'PUT', '/api/v1/tasks/no-such-task', {
      body: { business: 'acme' },
      headers: cairn.auth,
    });
    expect(nothing.status).toBe(422);
    expect(nothing.body.detail).toEqual([
      expect.objectContaining({ loc: ['body'], type: 'value_error' }),
    ]);
    const unchanged = await http(cairn.url, 'PUT', `/api/v1/tasks/${task.gid}`, {
      body: { business: 'acme', name: 'Checked' },
      headers: cairn.auth,
    });
    expect(unchanged.body.data).toMatchObject({ business: 'acme', name: 'Checked' });
  });

  it('deletes a task, its edges and records the facts; then it is 404', async () => {
    const a = await create({ business: 'acme', name: 'A' });
    const b = await create({ business: 'acme', name: 'B' });
    const c = await create({ business: 'acme', name: 'C' });
    // b depends on a; c depends on b.
    for (const [from, to] of [
      [b, a],
      [c, b],
    ]) {
      const res = await http(cairn.url, 'POST', `/api/v1/tasks/${from.gid}/dependencies`, {
        body: { dependencies: [to.gid] },
        headers: cairn.auth,
      });
      expect(res.status).toBe(200);
    }
    const res = await http(cairn.url, 'DELETE', `/api/v1/tasks/${b.gid}`, { headers: cairn.auth });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(
      (await http(cairn.url, 'GET', `/api/v1/tasks/${b.gid}`, { headers: cairn.auth })).status,
    ).toBe(404);
    const again = await http(cairn.url, 'DELETE', `/api/v1/tasks/${b.gid}`, {
      headers: cairn.auth,
    });
    expect(again.status).toBe(404);
    const edges = await cairn.db
      .selectFrom('task_dependencies')
      .selectAll()
      .where((eb) => eb.or([eb('task_gid', '=', b.gid), eb('dependency_gid', '=', b.gid)]))
      .execute();
    expect(edges).toEqual([]);
    const bFacts = await factsOf(b.gid);
    expect(bFacts.slice(-2).map((f) => [f.kind, f.payload.dependency_gid])).toEqual([
      ['dependency_removed', a.gid],
      ['task_deleted', undefined],
    ]);
    // The edge where b was the dependency is attributed to its dependent, c.
    const cFacts = await factsOf(c.gid);
    expect(cFacts.at(-1)).toMatchObject({
      kind: 'dependency_removed',
      payload: { dependency_gid: b.gid, name: 'C' },
    });
    const dependents = await http(cairn.url, 'GET', `/api/v1/tasks/${a.gid}/dependents`, {
      headers: cairn.auth,
    });
    expect(dependents.body.data).toEqual([]);
  });

  it('hides tasks of other businesses exactly like missing ones', async () => {
    const task = await create({ business: 'globex', name: 'Secret' });
    const acmeOnly = await cairn.token({ businesses: ['acme'] });
    const missing = '00000000-0000-4000-8000-000000000000';
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { name: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const hidden = await http(cairn.url, method, `/api/v1/tasks/${task.gid}`, {
        body,
        headers: acmeOnly,
      });
      const absent = await http(cairn.url, method, `/api/v1/tasks/${missing}`, {
        body,
        headers: acmeOnly,
      });
      expect(hidden.status).toBe(404);
      expect(absent.status).toBe(404);
      expect(hidden.body.title).toBe(absent.body.title);
      expect(hidden.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    const stillThere = await http(cairn.url, 'GET', `/api/v1/tasks/${task.gid}`, {
      headers: cairn.auth,
    });
    expect(stillThere.status).toBe(200);
  });

  it('asks workflows:write for writes and workflows:read for reads', async () => {
    const task = await create({ business: 'acme', name: 'Scoped' });
    const reader = await cairn.token({ businesses: ['acme'], scopes: ['workflows:read'] });
    const writer = await cairn.token({ businesses: ['acme'], scopes: ['workflows:write'] });
    const writes = [
      http(cairn.url, 'POST', '/api/v1/tasks', {
        body: { business: 'acme', name: 'n' },
        headers: reader,
      }),
      http(cairn.url, 'PUT', `/api/v1/tasks/${task.gid}`, { body: { name: 'n' }, headers: reader }),
      http(cairn.url, 'DELETE', `/api/v1/tasks/${task.gid}`, { headers: reader }),
      http(cairn.url, 'POST', `/api/v1/tasks/${task.gid}/dependencies`, {
        body: { dependencies: [task.gid] },
        headers: reader,
      }),
      http(cairn.url, 'DELETE', `/api/v1/tasks/${task.gid}/dependencies/${task.gid}`, {
        headers: reader,
      }),
    ];
    const reads = [
      http(cairn.url, 'GET', `/api/v1/tasks/${task.gid}`, { headers: writer }),
      http(cairn.url, 'GET', '/api/v1/tasks', { headers: writer }),
      http(cairn.url, 'GET', `/api/v1/tasks/${task.gid}/dependents`, { headers: writer }),
      http(cairn.url, 'GET', `/api/v1/tasks/${task.gid}/dependencies`, { headers: writer }),
    ];
    for (const res of await Promise.all([...writes, ...reads])) {
      expect(res.status).toBe(403);
    }
    const anonymous = await http(cairn.url, 'GET', `/api/v1/tasks/${task.gid}/dependents`);
    expect(anonymous.status).toBe(401);
  });
});
