import { beforeAll, describe, expect, it } from 'vitest';
import { knownLabelsStatement } from '../../libs/analytics/compile/known-labels.ts';
import type { QueryFilter } from '../../libs/analytics/parse/query-filters.ts';
import { parseQuery } from '../../libs/analytics/parse/query-parser.ts';
import { resolvePeriod } from '../../libs/analytics/period/period.ts';
import { queryWarnings } from '../../libs/analytics/shape/query-metadata.ts';
import { useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';
import { openApiValidator } from '../support/openapi-validator.ts';

/** Filter operators, `any` groups, the unknown-label warning and IANA zone names, over HTTP. */
describe('query filters and zone names', () => {
  const cairn = useCairn({ scopes: ['analytics:read'], businesses: ['flt'] });
  let expectDocumented: ReturnType<typeof openApiValidator>;

  const query = async (body: Record<string, unknown>) => {
    const res = await http(cairn.url, 'POST', '/api/v1/query', { body, headers: cairn.auth });
    expectDocumented('post', '/api/v1/query', res);
    return res;
  };
  /** tasks_created by project under `filters`, as `{project: count}`. */
  const byProject = async (filters: unknown[]) => {
    const res = await query({
      metrics: ['tasks_created'],
      dimensions: ['project'],
      period: 'last_7_days',
      filters,
    });
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    return Object.fromEntries(
      res.body.data.map((row: { project: string | null; tasks_created: number }) => [
        String(row.project),
        row.tasks_created,
      ]),
    );
  };

  const TASKS = [
    { name: 'a', project: 'Apollo-Launch', assignee: 'Ann' },
    { name: 'b', project: 'apollo-ops' },
    { name: 'c', project: 'Zephyr', assignee: 'Bob', status: 'in_progress' },
    { name: 'd', assignee: 'Ann' },
  ];

  beforeAll(async () => {
    expectDocumented = openApiValidator((await http(cairn.url, 'GET', '/openapi.json')).body);
    const writer = await cairn.token({ scopes: ['workflows:write'], businesses: ['flt', 'other'] });
    const bodies = [
      ...TASKS.map((task) => ({ business: 'flt', ...task })),
      // Another business's label: unknown to 'flt' all the same.
      { business: 'other', name: 'e', project: 'Secret' },
    ];
    for (const body of bodies) {
      const res = await http(cairn.url, 'POST', '/api/v1/tasks', { body, headers: writer });
      expect(res.status).toBe(201);
    }
    await waitFor(async () => (await byProject([])).Zephyr === 1 && (await byProject([])).null, {
      timeoutMs: 60_000,
    });
  }, 90_000);

  it('applies each operator; contains ignores case and never matches a null label', async () => {
    const project = (op: string, values: unknown[]) => [{ dimension: 'project', op, values }];
    const all = { 'Apollo-Launch': 1, 'apollo-ops': 1, Zephyr: 1, null: 1 };
    expect(await byProject([])).toEqual(all);
    expect(await byProject(project('eq', ['Zephyr']))).toEqual({ Zephyr: 1 });
    expect(await byProject(project('neq', ['Zephyr']))).toEqual({
      'Apollo-Launch': 1,
      'apollo-ops': 1,
      null: 1,
    });
    expect(await byProject(project('in', ['Zephyr', null]))).toEqual({ Zephyr: 1, null: 1 });
    expect(await byProject(project('not_in', ['Zephyr', null]))).toEqual({
      'Apollo-Launch': 1,
      'apollo-ops': 1,
    });
    expect(await byProject(project('contains', ['APOLLO']))).toEqual({
      'Apollo-Launch': 1,
      'apollo-ops': 1,
    });
    expect(await byProject(project('contains', ['zEp', 'OPS']))).toEqual({
      'apollo-ops': 1,
      Zephyr: 1,
    });
    // A null label contains no substring: not_contains keeps it.
    expect(await byProject(project('not_contains', ['apollo']))).toEqual({ Zephyr: 1, null: 1 });
    expect(await byProject(project('contains', ['%']))).toEqual({});
    expect(await byProject(project('contains', ['_']))).toEqual({});
    expect(await byProject([{ dimension: 'assignee', op: 'not_contains', values: ['a'] }])).toEqual(
      { 'apollo-ops': 1, Zephyr: 1 },
    );
  });

  it('ORs the elements of an any-group, nested three deep, ANDed with the other filters', async () => {
    expect(
      await byProject([
        {
          any: [
            { dimension: 'project', op: 'eq', values: ['Zephyr'] },
            { dimension: 'assignee', op: 'eq', values: ['Ann'] },
          ],
        },
      ]),
    ).toEqual({ 'Apollo-Launch': 1, Zephyr: 1, null: 1 });
    const deep = {
      any: [
        { any: [{ any: [{ dimension: 'status', op: 'eq', values: ['in_progress'] }] }] },
        { any: [{ dimension: 'project', op: 'contains', values: ['ops'] }] },
      ],
    };
    expect(await byProject([deep])).toEqual({ 'apollo-ops': 1, Zephyr: 1 });
    expect(
      await byProject([deep, { dimension: 'project', op: 'not_contains', values: ['apollo'] }]),
    ).toEqual({ Zephyr: 1 });
  });

  it('refuses a fourth level and bad conditions at their place inside the groups', async () => {
    const condition = { dimension: 'project', op: 'eq', values: ['x'] };
    const refused = async (filters: unknown[], loc: unknown[], type: string) => {
      const res = await query({ metrics: ['tasks_created'], filters });
      expect(res.status, res.text.slice(0, 300)).toBe(422);
      expect(res.body.detail).toContainEqual(expect.objectContaining({ loc, type }));
    };
    await refused(
      [{ any: [{ any: [{ any: [{ any: [condition] }] }] }] }],
      ['body', 'filters', 0, 'any', 0, 'any', 0, 'any', 0, 'any'],
      'extra_forbidden',
    );
    await refused(
      [{ any: [condition, { dimension: 'project', op: 'like', values: ['x'] }] }],
      ['body', 'filters', 0, 'any', 1, 'op'],
      'enum',
    );
    await refused(
      [condition, { any: [{ any: [{ dimension: 'project', op: 'eq', values: ['a', 'b'] }] }] }],
      ['body', 'filters', 1, 'any', 0, 'any', 0, 'values'],
      'value_error',
    );
    await refused(
      [{ any: [{ dimension: 'project', op: 'contains', values: ['a', null] }] }],
      ['body', 'filters', 0, 'any', 0, 'values', 1],
      'value_error',
    );
    await refused(
      [{ dimension: 'assignee', op: 'not_contains', values: [''] }],
      ['body', 'filters', 0, 'values', 0],
      'value_error',
    );
    await refused([{ any: [] }], ['body', 'filters', 0, 'any'], 'too_short');
    await refused([{ any: [condition], ...condition }], ['body', 'filters', 0], 'value_error');
  });

  it('warns over HTTP when an eq/in value names a label the business never had', async () => {
    const typo = await query({
      metrics: ['tasks_created'],
      period: 'last_7_days',
      filters: [{ dimension: 'project', op: 'in', values: ['Zephyr', 'Zephir'] }],
    });
    expect(typo.status).toBe(200);
    expect(typo.body.warnings).toEqual([
      expect.objectContaining({
        code: 'unknown_filter_value',
        dimension: 'project',
        values: ['Zephir'],
      }),
    ]);
    const known = await query({
      metrics: ['tasks_created'],
      period: 'last_7_days',
      filters: [{ dimension: 'project', op: 'eq', values: ['Zephyr'] }],
    });
    expect(known.body.warnings).toBeUndefined();
  });

  it('finds which eq/in labels the business never had, in one lookup', async () => {
    const client = cairn.engines.clickhouse.client;
    const warningsFor = async (filters: QueryFilter[]) => {
      const parsed = parseQuery({ metrics: ['tasks_created'], filters });
      const statement = knownLabelsStatement(parsed.filters, ['flt']);
      const knownLabels = statement
        ? await (
            await client.query({
              query: statement.sql,
              query_params: statement.params,
              format: 'JSONEachRow',
            })
          ).json<{ dimension: string; label: string }>()
        : undefined;
      return queryWarnings({
        query: parsed,
        period: resolvePeriod('last_7_days', new Date(), 'UTC'),
        rowCount: 0,
        totalRows: 0,
        capped: false,
        partial: false,
        timeoutMs: 1000,
        freshness: { lagMs: 0, dataAsOf: new Date(), watermark: '' },
        staleAfterMs: 60_000,
        ...(knownLabels ? { knownLabels } : {}),
      } as Parameters<typeof queryWarnings>[0]);
    };
    expect(
      await warningsFor([
        {
          any: [
            { dimension: 'project', op: 'in', values: ['Zephyr', 'zephyr', 'Secret', null] },
            { dimension: 'status', op: 'eq', values: ['in_progress'] },
          ],
        },
        { dimension: 'assignee', op: 'eq', values: ['Bob'] },
      ]),
    ).toEqual([
      expect.objectContaining({
        code: 'unknown_filter_value',
        dimension: 'project',
        values: ['zephyr', 'Secret'],
      }),
    ]);
    // Only eq and in name labels: neither a known label nor another operator warns.
    expect(
      await warningsFor([
        { dimension: 'project', op: 'eq', values: ['apollo-ops'] },
        { dimension: 'project', op: 'not_in', values: ['nope'] },
        { dimension: 'assignee', op: 'contains', values: ['nobody'] },
      ]),
    ).toEqual([]);
    expect(knownLabelsStatement([{ dimension: 'project', op: 'neq', values: ['x'] }], null)).toBe(
      null,
    );
  });

  it.each([
    ['Asia/Calcutta', 'Asia/Kolkata'],
    ['Asia/Kolkata', 'Asia/Kolkata'],
    ['asia/kolkata', 'Asia/Kolkata'],
    ['Europe/Kiev', 'Europe/Kyiv'],
    ['Europe/Kyiv', 'Europe/Kyiv'],
    ['US/Pacific', 'America/Los_Angeles'],
  ])('states %s as its IANA name %s, with the same answer', async (sent, iana) => {
    const body = { metrics: ['tasks_created'], dimensions: ['day'], period: 'last_7_days' };
    const [res, canonical] = await Promise.all([
      query({ ...body, timezone: sent }),
      query({ ...body, timezone: iana }),
    ]);
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    expect(res.body.metadata.query.period.timezone).toBe(iana);
    expect(canonical.body.metadata.query.period).toEqual(res.body.metadata.query.period);
    expect(res.body.data).toEqual(canonical.body.data);
    expect(
      res.body.data.reduce(
        (sum: number, row: { tasks_created: number }) => sum + row.tasks_created,
        0,
      ),
    ).toBe(4);
  });
});
