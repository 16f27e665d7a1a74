import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';

/** Task list filters beyond equality: lists, `null`, more ranges, date-only bounds, search. */
describe('GET /api/v1/tasks filters and search', () => {
  // Tasks are created one day apart at 08:00 UTC, so a date-only bound cuts between them.
  const day = (n: number, hour = 8) => Date.UTC(2026, 0, 1 + n, hour);
  let clock = day(0);
  const fixture = [
    { name: 'Write the launch plan', project: 'alpha', assignee: 'ann', status: 'open' },
    { name: 'Review launch copy', project: 'beta', assignee: 'bob', status: 'in_progress' },
    { name: 'Fix 100% CPU_bug', project: null, assignee: null, status: 'open' },
    { name: 'LAUNCH party', project: 'alpha', assignee: null, status: 'completed' },
    { name: 'Order cake', project: null, assignee: 'ann', status: 'cancelled' },
    { name: 'Plan b_launch', project: 'gamma, delta', assignee: 'bob', status: 'in_progress' },
  ];
  const gids: string[] = [];
  const cairn = useCairn({ now: () => new Date(clock), businesses: ['acme'] });
  beforeAll(async () => {
    for (const [i, task] of fixture.entries()) {
      clock = day(i);
      const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
        body: { business: 'acme', ...task },
        headers: cairn.auth,
      });
      expect(res.status).toBe(201);
      gids.push(res.body.data.gid);
    }
    // Task 1 is completed on day 10 at noon; the others keep their creation time as updated_at.
    clock = day(10, 12);
    const done = await http(cairn.url, 'PUT', `/api/v1/tasks/${gids[1]}`, {
      body: { status: 'completed' },
      headers: cairn.auth,
    });
    expect(done.status).toBe(200);
    const other = await cairn.token({ businesses: ['initech'] });
    await http(cairn.url, 'POST', '/api/v1/tasks', {
      body: { business: 'initech', name: 'launch elsewhere', project: 'alpha' },
      headers: other,
    });
  }, 60_000);

  /** The fixture indexes a query answers, in creation order. */
  const matching = async (query: string): Promise<number[]> => {
    const res = await http(cairn.url, 'GET', `/api/v1/tasks?per_page=100&order=asc&${query}`, {
      headers: cairn.auth,
    });
    expect(res.status, `${query}: ${res.text}`).toBe(200);
    expect(res.body.meta.total).toBe(res.body.data.length);
    return res.body.data.map((task: { gid: string }) => gids.indexOf(task.gid));
  };

  it('takes several statuses, comma-separated or repeated', async () => {
    expect(await matching('status=open,in_progress')).toEqual([0, 2, 5]);
    expect(await matching('status=open&status=in_progress')).toEqual([0, 2, 5]);
    expect(await matching('status=completed&status=cancelled,open')).toEqual([0, 1, 2, 3, 4]);
    expect(await matching('status=completed')).toEqual([1, 3]);
  });

  it('takes several projects and assignees, with null for none', async () => {
    expect(await matching('project=alpha,beta')).toEqual([0, 1, 3]);
    expect(await matching('project=null')).toEqual([2, 4]);
    expect(await matching('project=alpha,null')).toEqual([0, 2, 3, 4]);
    expect(await matching('project=null&project=beta')).toEqual([1, 2, 4]);
    expect(await matching('assignee=null')).toEqual([2, 3]);
    expect(await matching('assignee=ann,bob')).toEqual([0, 1, 4, 5]);
    expect(await matching('assignee=ann&project=null&status=cancelled')).toEqual([4]);
    // Commas separate values, so a label holding one is matched by neither half alone.
    expect(await matching(`project=${encodeURIComponent('gamma, delta')}`)).toEqual([]);
    expect(await matching('project=nobody')).toEqual([]);
  });

  it('filters created_at, updated_at and completed_at by ranges, dates meaning midnight UTC', async () => {
    expect(await matching('created_at[lt]=2026-01-02')).toEqual([0]);
    expect(await matching('created_at[gte]=2026-01-02&created_at[lt]=2026-01-04')).toEqual([1, 2]);
    expect(
      await matching(
        `created_at[gte]=${encodeURIComponent('2026-01-02T08:00:00Z')}&created_at[lt]=${encodeURIComponent('2026-01-03T07:59:59+00:00')}`,
      ),
    ).toEqual([1]);
    expect(await matching('updated_at[gte]=2026-01-11')).toEqual([1]);
    expect(await matching('updated_at[lt]=2026-01-11&updated_at[gte]=2026-01-05')).toEqual([4, 5]);
    expect(await matching('completed_at[gte]=2026-01-01')).toEqual([1, 3]);
    expect(await matching('completed_at[gte]=2026-01-04&completed_at[lt]=2026-01-05')).toEqual([3]);
    expect(
      await matching(`completed_at[lt]=${encodeURIComponent('2026-01-11T12:00:00Z')}`),
    ).toEqual([3]);
  });

  it('searches names case-insensitively, taking the text literally', async () => {
    expect(await matching('q=launch')).toEqual([0, 1, 3, 5]);
    expect(await matching('q=LaUnCh')).toEqual([0, 1, 3, 5]);
    expect(await matching('q=launch&status=completed')).toEqual([1, 3]);
    expect(await matching(`q=${encodeURIComponent('0% c')}`)).toEqual([2]);
    expect(await matching(`q=${encodeURIComponent('u_b')}`)).toEqual([2]);
    // `%` and `_` are not wildcards: nothing holds these three characters.
    expect(await matching(`q=${encodeURIComponent('%_%')}`)).toEqual([]);
    expect(await matching(`q=${encodeURIComponent('n_b')}`)).toEqual([]);
    expect(await matching(`q=${encodeURIComponent('d\\c')}`)).toEqual([]);
  });

  it('adds the opt_fields members to compact records, on the list and on one task', async () => {
    const list = await http(cairn.url, 'GET', '/api/v1/tasks?opt_fields=status,assignee&q=party', {
      headers: cairn.auth,
    });
    expect(list.body.data).toEqual([
      {
        gid: gids[3],
        resource_type: 'task',
        name: 'LAUNCH party',
        status: 'completed',
        assignee: null,
      },
    ]);
    const one = await http(cairn.url, 'GET', `/api/v1/tasks/${gids[1]}?opt_fields=completed_at`, {
      headers: cairn.auth,
    });
    expect(one.status).toBe(200);
    expect(one.body.data).toEqual({
      gid: gids[1],
      resource_type: 'task',
      name: 'Review launch copy',
      completed_at: new Date(day(10, 12)).toISOString(),
    });
    const whole = await http(cairn.url, 'GET', `/api/v1/tasks/${gids[1]}`, { headers: cairn.auth });
    expect(Object.keys(whole.body.data)).toContain('updated_at');
  });

  it('refuses bad filter values at their own query loc, all in one answer', async () => {
    const cases: Array<[string, Array<[string, string]>]> = [
      ['status=open,done', [['status', 'enum']]],
      ['status=', [['status', 'enum']]],
      ['project=', [['project', 'string_too_short']]],
      ['assignee=ann,', [['assignee', 'string_too_short']]],
      [`assignee=${'x'.repeat(201)}`, [['assignee', 'string_too_long']]],
      [`project=${Array.from({ length: 51 }, (_, i) => i).join(',')}`, [['project', 'too_long']]],
      ['q=ab', [['q', 'string_too_short']]],
      [`q=${'x'.repeat(201)}`, [['q', 'string_too_long']]],
      ['updated_at[gte]=2026-02-30', [['updated_at[gte]', 'datetime_parsing']]],
      ['completed_at[lt]=yesterday', [['completed_at[lt]', 'datetime_parsing']]],
      ['completed_at[lt]=0000-12-31', [['completed_at[lt]', 'greater_than_equal']]],
      ['updated_at[gt]=2026-01-01', [['updated_at[gt]', 'extra_forbidden']]],
      ['opt_fields=status,colour', [['opt_fields', 'enum']]],
      [
        'status=late&project=&completed_at[gte]=soon',
        [
          ['status', 'enum'],
          ['project', 'string_too_short'],
          ['completed_at[gte]', 'datetime_parsing'],
        ],
      ],
    ];
    for (const [query, expected] of cases) {
      const res = await http(cairn.url, 'GET', `/api/v1/tasks?${query}`, { headers: cairn.auth });
      expect(res.status, query).toBe(422);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(
        res.body.detail.map((issue: { loc: string[]; type: string }) => [issue.loc[1], issue.type]),
        query,
      ).toEqual(expected);
    }
    const one = await http(cairn.url, 'GET', `/api/v1/tasks/${gids[0]}?colour=red`, {
      headers: cairn.auth,
    });
    expect(one.status).toBe(422);
    expect(one.body.detail).toEqual([
      expect.objectContaining({ loc: ['query', 'colour'], type: 'extra_forbidden' }),
    ]);
  });

  it('answers a PUT with nothing to change with 422 and writes nothing', async () => {
    const before = await http(cairn.url, 'GET', `/api/v1/tasks/${gids[0]}`, {
      headers: cairn.auth,
    });
    for (const body of [{}, { business: 'acme' }]) {
      const res = await http(cairn.url, 'PUT', `/api/v1/tasks/${gids[0]}`, {
        body,
        headers: cairn.auth,
      });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.detail).toEqual([
        expect.objectContaining({ loc: ['body'], type: 'value_error' }),
      ]);
    }
    const after = await http(cairn.url, 'GET', `/api/v1/tasks/${gids[0]}`, { headers: cairn.auth });
    expect(after.body.data).toEqual(before.body.data);
  });
  it('answers a name search from the trigram index once there are many tasks', async () => {
    // Last in the file: embedded Postgres runs on this thread, and the long insert stalls the
    // server's timers enough to cut a kept-alive connection a following request would reuse.
    const rolledBack = new Error('roll back');
    let plan = '';
    await cairn.engines.postgres.db
      .transaction()
      .execute(async (trx) => {
        // Enough rows, in a business nobody reads, that a scan costs more than the index.
        await sql`insert into tasks (gid, business, name)
          select 'bulk-' || i, 'bulk', 'bulk task ' || md5(i::text)
          from generate_series(1, 20000) as i`.execute(trx);
        // What autovacuum would do: move the index's pending entries into its tree.
        await sql`select gin_clean_pending_list('tasks_name_trgm_idx'::regclass)`.execute(trx);
        await sql`analyze tasks`.execute(trx);
        const { rows } = await sql<Record<string, string>>`explain select gid from tasks
          where name ilike ${'%launch%'}`.execute(trx);
        plan = rows.map((row) => Object.values(row).join(' ')).join('\n');
        throw rolledBack;
      })
      .catch((error) => {
        if (error !== rolledBack) throw error;
      });
    expect(plan).toContain('tasks_name_trgm_idx');
  }, 60_000);
});
