import { CompiledQuery, sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { taskCollectionStatements } from '../../libs/tasks/task-collection.repository.ts';
import { useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';

/**
 * Page-number lists reach a bounded depth (here 200 tasks, set small so the data stays small):
 * pages past it answer 422 when more tasks match, and counting stops one past the bound.
 */
describe('GET /api/v1/tasks depth bound', () => {
  const DEPTH = 200;
  const cairn = useCairn({
    env: { CAIRN_TASK_LIST_MAX_DEPTH: String(DEPTH) },
    businesses: ['acme', 'exact', 'over', 'small'],
  });

  /** `count` tasks of `business`, created a minute apart; every fourth one in progress. */
  const arrange = (business: string, count: number) =>
    sql`insert into tasks (gid, business, name, status, created_at, updated_at)
      select ${business} || '-' || lpad(i::text, 5, '0'), ${business}, 'task ' || i,
        case when i % 4 = 0 then 'in_progress' else 'open' end,
        timestamptz '2026-01-01' + i * interval '1 minute',
        timestamptz '2026-01-01' + i * interval '1 minute'
      from generate_series(1, ${count}) as i`.execute(cairn.db);

  beforeAll(async () => {
    await arrange('acme', 250);
    await arrange('exact', DEPTH);
    await arrange('over', DEPTH + 1);
    await arrange('small', 30);
  });

  const list = (query: string) =>
    http(cairn.url, 'GET', `/api/v1/tasks?${query}`, { headers: cairn.auth });
  const gidsOf = (body: { data: Array<{ gid: string }> }) => body.data.map((task) => task.gid);
  /** acme's gids newest first, as the default sort lists them. */
  const acmeNewestFirst = Array.from(
    { length: 250 },
    (_, i) => `acme-${String(250 - i).padStart(5, '0')}`,
  );

  it('refuses a page past the bound of a longer list at query.page, pointing to filters', async () => {
    for (const query of [
      'business=acme&page=3&per_page=100',
      'business=acme&page=11&per_page=20',
      'business=acme&page=2147483647&per_page=100',
      'page=7&per_page=30',
    ]) {
      const res = await list(query);
      expect(res.status, query).toBe(422);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body.detail, query).toEqual([
        expect.objectContaining({ loc: ['query', 'page'], type: 'less_than_equal' }),
      ]);
      const { msg } = res.body.detail[0];
      expect(msg).toContain(`page × per_page ≤ ${DEPTH}`);
      expect(msg).toContain('created_at[lt]');
    }
    const oldestFirst = await list('business=acme&page=3&per_page=100&sort=updated_at&order=asc');
    expect(oldestFirst.status).toBe(422);
    expect(oldestFirst.body.detail[0].msg).toMatch(
      /^Input should be less than or equal to 2: .*updated_at\[gte\]/,
    );
  });

  it('serves every page up to and at the bound, the total capped and said to be a lower bound', async () => {
    const atBound = await list('business=acme&page=2&per_page=100');
    expect(atBound.status).toBe(200);
    expect(atBound.body.meta).toMatchObject({
      total: DEPTH,
      total_is_lower_bound: true,
      page: 2,
      per_page: 100,
      total_pages: 2,
    });
    expect(gidsOf(atBound.body)).toEqual(acmeNewestFirst.slice(100, 200));
    const under = await list('business=acme&page=9&per_page=20');
    expect(gidsOf(under.body)).toEqual(acmeNewestFirst.slice(160, 180));
    // 30 does not divide 200: the pages that can be served end at row 180.
    const uneven = await list('business=acme&page=6&per_page=30');
    expect(uneven.status).toBe(200);
    expect(uneven.body.meta).toMatchObject({ total: DEPTH, total_pages: 6 });
    expect(gidsOf(uneven.body)).toEqual(acmeNewestFirst.slice(150, 180));
    expect((await list('business=acme&page=7&per_page=30')).status).toBe(422);
    // A filter brings the rest within reach, and its count is exact.
    const narrowed = await list(
      `business=acme&per_page=100&created_at[lt]=${encodeURIComponent('2026-01-01T00:51:00Z')}`,
    );
    expect(narrowed.body.meta).toMatchObject({
      total: 50,
      total_is_lower_bound: false,
      total_pages: 1,
    });
    expect(gidsOf(narrowed.body)).toEqual(acmeNewestFirst.slice(200));
  });

  it('counts exactly up to the bound and one past it', async () => {
    const exact = await list('business=exact&page=2&per_page=100');
    expect(exact.body.meta).toMatchObject({
      total: DEPTH,
      total_is_lower_bound: false,
      total_pages: 2,
    });
    expect(exact.body.data).toHaveLength(100);
    // Within the bound every page stays a page: past the end it is empty, as it always was.
    const pastEnd = await list('business=exact&page=3&per_page=100');
    expect(pastEnd.status).toBe(200);
    expect(pastEnd.body).toMatchObject({ data: [], meta: { total: DEPTH, page: 3 } });
    const farPastEnd = await list('business=small&page=2147483647&per_page=100');
    expect(farPastEnd.status).toBe(200);
    expect(farPastEnd.body).toMatchObject({ data: [], meta: { total: 30, total_pages: 1 } });

    const over = await list('business=over&page=2&per_page=100');
    expect(over.body.meta).toMatchObject({ total: DEPTH, total_is_lower_bound: true });
    expect((await list('business=over&page=3&per_page=100')).status).toBe(422);
    const filtered = await list('business=over&status=in_progress&per_page=100');
    expect(filtered.body.meta).toMatchObject({
      total: 50,
      total_is_lower_bound: false,
      total_pages: 1,
    });
  });

  it('stops counting one past the bound instead of reading every matching task', async () => {
    // More tasks than the bound many times over, in a business nobody reads.
    await arrange('bulk', 20 * DEPTH);
    await sql`analyze tasks`.execute(cairn.db);
    const query = {
      page: 1,
      per_page: 20,
      sort: 'created_at',
      order: 'desc',
      business: 'bulk',
    } as const;
    for (const filters of [{}, { status: ['open' as const] }]) {
      const { count } = taskCollectionStatements(cairn.db, query, filters, ['bulk'], DEPTH);
      const compiled = count.compile();
      const { rows } = await cairn.db.executeQuery<{ 'QUERY PLAN': unknown }>(
        CompiledQuery.raw(`explain (analyze, format json) ${compiled.sql}`, [
          ...compiled.parameters,
        ]),
      );
      const plan = (rows[0]!['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan;
      const limit = nodes(plan).find((node) => node['Node Type'] === 'Limit');
      expect(limit, JSON.stringify(plan)).toBeDefined();
      expect(limit!['Actual Rows']).toBe(DEPTH + 1);
      // Under the limit, reading stops once it has one past the bound.
      const read = nodes(limit!).filter((node) => node !== limit && node.Plans === undefined);
      for (const leaf of read) expect(leaf['Actual Rows']).toBeLessThanOrEqual(DEPTH + 1);
      const { total } = await count.executeTakeFirstOrThrow();
      expect(Number(total)).toBe(DEPTH + 1);
    }
  });

  it('indexes a task whose name and labels are as long as they may be', async () => {
    // Four-byte characters at every maximum: each list index entry still fits a b-tree page.
    const wide = '\u{1F600}';
    await sql`insert into tasks (gid, business, name, project, assignee)
      values ('wide-1', ${'b'.repeat(100)}, ${wide.repeat(500)}, ${wide.repeat(200)},
        ${wide.repeat(200)})`.execute(cairn.db);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from tasks
      where gid = 'wide-1'`.execute(cairn.db);
    expect(rows[0]!.n).toBe(1);
  });

  it('describes the bound in the served OpenAPI document', async () => {
    const doc = (await http(cairn.url, 'GET', '/openapi.json')).body;
    const operation = doc.paths['/api/v1/tasks'].get;
    const page = operation.parameters.find((p: { name: string }) => p.name === 'page');
    expect(page.description).toContain(`page × per_page ≤ ${DEPTH}`);
    expect(page.description).toContain('total_is_lower_bound');
    const meta = operation.responses['200'].content['application/json'].schema.properties.meta;
    expect(meta.properties.total_is_lower_bound).toMatchObject({ type: 'boolean' });
    expect(meta.required).toContain('total_is_lower_bound');
  });
});

interface PlanNode {
  'Node Type': string;
  'Actual Rows': number;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}
