import { beforeAll, describe, expect, it } from 'vitest';
import { useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';

describe('GET /api/v1/tasks', () => {
  // A fixed clock, moved one day per task, so created_at filters have known answers.
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const names: string[] = [];
  const cairn = useCairn({ now: () => new Date(clock), businesses: ['acme', 'globex'] });
  beforeAll(async () => {
    for (let i = 0; i < 25; i++) {
      clock = Date.parse('2026-01-01T00:00:00Z') + i * 86_400_000;
      const name = `task ${String(i).padStart(2, '0')}`;
      names.push(name);
      const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
        body: {
          business: i % 5 === 0 ? 'globex' : 'acme',
          name,
          project: i % 2 === 0 ? 'even' : 'odd',
          status: i % 3 === 0 ? 'completed' : 'open',
          due_on: i < 20 ? `2026-03-${String(i + 1).padStart(2, '0')}` : null,
        },
        headers: cairn.auth,
      });
      expect(res.status).toBe(201);
    }
    // Another business the token cannot see.
    const other = await cairn.token({ businesses: ['initech'] });
    await http(cairn.url, 'POST', '/api/v1/tasks', {
      body: { business: 'initech', name: 'hidden' },
      headers: other,
    });
  });

  const list = (query: string, headers = cairn.auth) =>
    http(cairn.url, 'GET', `/api/v1/tasks${query}`, { headers });

  it('defaults to page 1, 20 per page, newest first, every readable business', async () => {
    const res = await list('');
    expect(res.status).toBe(200);
    expect(res.body.meta).toMatchObject({ total: 25, page: 1, per_page: 20, total_pages: 2 });
    expect(res.body.meta.request_id).toBe(res.headers.get('x-request-id'));
    expect(res.body.data.map((t: { name: string }) => t.name)).toEqual(
      [...names].reverse().slice(0, 20),
    );
    const second = await list('?page=2');
    expect(second.body.data.map((t: { name: string }) => t.name)).toEqual(
      [...names].reverse().slice(20),
    );
    const beyond = await list('?page=9');
    expect(beyond.body).toMatchObject({ data: [], meta: { total: 25, page: 9 } });
  });

  it('filters by equality and by half-open ranges', async () => {
    const acmeOpenOdd = await list('?business=acme&status=open&project=odd&per_page=100');
    const expected = names.filter((_, i) => i % 5 !== 0 && i % 3 !== 0 && i % 2 === 1);
    expect(acmeOpenOdd.body.meta.total).toBe(expected.length);
    expect(acmeOpenOdd.body.data.map((t: { name: string }) => t.name).sort()).toEqual(expected);
    const created = await list(
      `?created_at[gte]=${encodeURIComponent('2026-01-03T00:00:00Z')}&created_at[lt]=${encodeURIComponent('2026-01-06T00:00:00Z')}&order=asc`,
    );
    expect(created.body.data.map((t: { name: string }) => t.name)).toEqual(names.slice(2, 5));
    const due = await list('?due_on[gte]=2026-03-10&due_on[lt]=2026-03-12&sort=due_on&order=asc');
    expect(due.body.data.map((t: { due_on: string }) => t.due_on)).toEqual([
      '2026-03-10',
      '2026-03-11',
    ]);
  });

  it('sorts by each allowed field in both directions, undated tasks last', async () => {
    const byName = await list('?sort=name&order=asc&per_page=100');
    expect(byName.body.data.map((t: { name: string }) => t.name)).toEqual(names);
    const byDue = await list('?sort=due_on&order=desc&per_page=100');
    const dues = byDue.body.data.map((t: { due_on: string | null }) => t.due_on);
    expect(dues.slice(0, 2)).toEqual(['2026-03-20', '2026-03-19']);
    expect(dues.slice(-5)).toEqual([null, null, null, null, null]);
    const byUpdated = await list('?sort=updated_at&order=asc&per_page=3');
    expect(byUpdated.body.data.map((t: { name: string }) => t.name)).toEqual(names.slice(0, 3));
  });

  it('answers a business outside the token with 404 and a token without businesses with nothing', async () => {
    const res = await list('?business=initech');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const own = await list('', await cairn.token({ businesses: ['initech'] }));
    expect(own.body.data.map((t: { name: string }) => t.name)).toEqual(['hidden']);
  });

  it('answers the last page there can be, empty', async () => {
    const res = await list('?page=2147483647&per_page=100');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
  });

  it('refuses unknown filters, unknown sort fields and bad values at their query loc', async () => {
    const cases: Array<[string, Array<string>, string]> = [
      ['?per_page=101', ['query', 'per_page'], 'less_than_equal'],
      ['?per_page=0', ['query', 'per_page'], 'greater_than_equal'],
      ['?page=0', ['query', 'page'], 'greater_than_equal'],
      ['?page=abc', ['query', 'page'], 'int_parsing'],
      ['?sort=priority', ['query', 'sort'], 'enum'],
      ['?order=up', ['query', 'order'], 'enum'],
      ['?status=done', ['query', 'status'], 'enum'],
      ['?colour=red', ['query', 'colour'], 'extra_forbidden'],
      ['?created_at[gt]=2026-01-01T00:00:00Z', ['query', 'created_at[gt]'], 'extra_forbidden'],
      ['?created_at[gte]=yesterday', ['query', 'created_at[gte]'], 'datetime_parsing'],
      ['?due_on[lt]=2026-13-01', ['query', 'due_on[lt]'], 'date_parsing'],
      // Past a Postgres bigint row offset, and text Postgres cannot hold.
      ['?page=2147483648', ['query', 'page'], 'less_than_equal'],
      ['?project=a%00b', ['query', 'project'], 'string_nul'],
    ];
    for (const [query, loc, type] of cases) {
      const res = await list(query);
      expect(res.status, query).toBe(422);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body.detail, query).toEqual([expect.objectContaining({ loc, type })]);
    }
  });
});
