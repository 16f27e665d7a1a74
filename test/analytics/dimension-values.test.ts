// A dimension's values for a type-ahead: every source the decider finds exact (rollups and raw
// facts) must list exactly what a count over the facts this file writes gives, for each
// dimension, period, time zone, prefix and limit; over HTTP, the documented shapes and access.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PeriodName, resolvePeriod } from '../../libs/analytics/period/period.ts';
import type { AnalyticsDeps } from '../../libs/analytics/query.service.ts';
import { ROLLUP_NAMES } from '../../libs/analytics/sources/rollups.ts';
import type { ValueDimension } from '../../libs/analytics/values/dimension-values.schemas.ts';
import { listDimensionValues } from '../../libs/analytics/values/dimension-values.service.ts';
import {
  LIST_CAP,
  LIST_HOLD_MS,
  listHolds,
  pickValues,
} from '../../libs/analytics/values/values-list.ts';
import { valueSources } from '../../libs/analytics/values/values-source.ts';
import { AppError } from '../../libs/http/errors.ts';
import type { FactRow } from '../../libs/projection/fact-rows.ts';
import { type Engines, openEngines } from '../../libs/storage/engines.ts';
import { analyticsDeps } from '../support/analytics.ts';
import { prng } from '../support/analytics-model.ts';
import { useCairn } from '../support/cairn.ts';
import { type TestConfig, testConfig, waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';

const NOW = new Date('2026-11-20T12:00:00Z');
const START = Date.parse('2026-06-01T00:00:00Z');
const PROJECTS = ['Alpha', 'alpine', 'ALPS', 'Beta', 'beta-2', 'Gamma', ''];
const ASSIGNEES = ['ann', 'Andy', 'anna', 'bob', 'Bea', ''];
const STATUSES = ['open', 'in_progress', 'completed', 'cancelled'];
const KINDS = ['task_created', 'task_updated', 'task_completed', 'dependency_added'];

/** The columns of a `facts` row this test writes (the rest take their defaults). */
type Fact = Pick<
  FactRow,
  | 'fact_id'
  | 'kind'
  | 'business'
  | 'task_gid'
  | 'occurred_at'
  | 'project'
  | 'assignee'
  | 'status'
  | 'previous_status'
  | 'previous_project'
  | 'previous_assignee'
  | 'task_created_at'
>;

const chTime = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

/** Seeded facts over two businesses, skewed so counts differ and some tie. */
function makeFacts(count: number): Fact[] {
  const { next: random } = prng(11);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * random() * list.length)] as T;
  const facts: Fact[] = [];
  for (let i = 0; i < count; i++) {
    const at = START + Math.floor(random() * (NOW.getTime() - START));
    const kind = KINDS[Math.floor(random() * KINDS.length)] as string;
    facts.push({
      fact_id: i + 1,
      kind,
      business: random() < 0.8 ? 'acme' : 'other',
      task_gid: String(i),
      occurred_at: chTime(at),
      project: pick(PROJECTS),
      assignee: pick(ASSIGNEES),
      status: pick(STATUSES),
      previous_status: kind === 'task_updated' ? 'open' : '',
      // A task moved out of a project leaves a closing row under the old one in the rollups.
      previous_project: kind === 'task_updated' ? pick(PROJECTS) : '',
      previous_assignee: kind === 'task_updated' ? pick(ASSIGNEES) : '',
      task_created_at: chTime(at),
    });
  }
  // A label used only long ago, left by a move this month: all time lists it, this month not.
  const moved = Date.parse('2026-11-03T10:00:00Z');
  facts.push(
    {
      ...(facts[0] as Fact),
      fact_id: count + 1,
      kind: 'task_created',
      business: 'acme',
      task_gid: 'legacy',
      occurred_at: chTime(Date.parse('2026-06-02T10:00:00Z')),
      project: 'Legacy',
      status: 'open',
      previous_status: '',
      previous_project: '',
    },
    {
      ...(facts[0] as Fact),
      fact_id: count + 2,
      kind: 'task_updated',
      business: 'acme',
      task_gid: 'legacy',
      occurred_at: chTime(moved),
      project: 'Alpha',
      status: 'open',
      previous_status: 'open',
      previous_project: 'Legacy',
    },
  );
  return facts;
}

/** The expected answer, counted over the facts themselves. */
function expectedValues(
  facts: readonly Fact[],
  business: string,
  dimension: ValueDimension,
  options: { period: { from: Date; to: Date } | null; prefix: string; limit: number },
): Array<{ value: string; facts: number }> {
  const counts = new Map<string, number>();
  for (const fact of facts) {
    if (fact.business !== business) continue;
    const at = Date.parse(`${fact.occurred_at.replace(' ', 'T')}Z`);
    const { period } = options;
    if (period && (at < period.from.getTime() || at >= period.to.getTime())) continue;
    const value = fact[dimension];
    if (value === '') continue;
    if (!value.toLowerCase().startsWith(options.prefix.toLowerCase())) continue;
    counts.set(value, (counts.get(value) ?? 0) + 1);
  }
  return [...counts]
    .map(([value, n]) => ({ value, facts: n }))
    .sort((a, b) => b.facts - a.facts || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
    .slice(0, options.limit);
}

describe('dimension values from every exact source', () => {
  let setup: TestConfig;
  let engines: Engines;
  let deps: AnalyticsDeps;
  const facts = makeFacts(3000);
  const ctx = { signal: new AbortController().signal, businesses: null };

  beforeAll(async () => {
    setup = await testConfig();
    engines = await openEngines(setup.config);
    deps = analyticsDeps(engines, { now: () => NOW });
    // Several inserts: the rollups hold the facts in separate, unmerged parts.
    for (let i = 0; i < facts.length; i += 500) {
      await engines.clickhouse.client.insert({
        table: 'facts',
        values: facts.slice(i, i + 500),
        format: 'JSONEachRow',
      });
    }
  }, 120_000);
  afterAll(async () => {
    await engines?.close();
    await setup?.cleanup();
  });

  const PERIOD_CASES: Array<PeriodName | undefined> = [
    undefined,
    'all_time',
    'this_month',
    'last_month',
    'last_7_days',
    'today',
  ];
  const cases = (['project', 'assignee', 'status'] as const).flatMap((dimension) =>
    PERIOD_CASES.flatMap((period) =>
      ['UTC', 'Asia/Kolkata'].map((timezone) => ({ dimension, period, timezone })),
    ),
  );

  it.each(cases)(
    '$dimension over $period in $timezone',
    async ({ dimension, period, timezone }) => {
      const resolved = period === undefined ? null : resolvePeriod(period, NOW, timezone);
      const sources = valueSources(dimension, resolved, new Set(ROLLUP_NAMES), NOW);
      for (const prefix of ['', 'a', 'BE', 'zz']) {
        for (const limit of [100, 2]) {
          const wanted = expectedValues(facts, 'acme', dimension, {
            period: resolved,
            prefix,
            limit,
          });
          for (const source of sources) {
            const input = { business: 'acme', dimension, timezone, prefix, limit };
            const answer = await listDimensionValues(
              deps,
              period === undefined ? input : { ...input, period },
              { ...ctx, source },
            );
            const context = `${source} prefix=${prefix} limit=${limit}`;
            expect(answer.data, context).toEqual(wanted);
            expect(answer.metadata, context).toMatchObject({
              source,
              row_count: wanted.length,
              prefix,
              limit,
            });
          }
        }
      }
    },
    120_000,
  );

  it('reads the cheapest rollup that answers, facts where none does', () => {
    const all = new Set(ROLLUP_NAMES);
    const period = (name: PeriodName, tz = 'UTC') => resolvePeriod(name, NOW, tz);
    expect(valueSources('project', null, all, NOW)[0]).toBe('rollup_labels_all');
    expect(valueSources('assignee', period('last_month'), all, NOW)[0]).toBe('rollup_labels_month');
    expect(valueSources('project', period('last_7_days'), all, NOW)[0]).toBe(
      'rollup_projects_blocked_day',
    );
    expect(valueSources('status', period('last_7_days'), all, NOW)[0]).toBe('rollup_business_day');
    // Kolkata's midnights are quarter hours in UTC: only the 15-minute rollup keeps them.
    expect(valueSources('status', period('today', 'Asia/Kolkata'), all, NOW)[0]).toBe(
      'rollup_business_blocked_15m',
    );
    expect(valueSources('project', period('today', 'Asia/Kolkata'), all, NOW)).toEqual(['facts']);
    expect(valueSources('project', null, new Set(), NOW)).toEqual(['facts']);
  });

  it('lists a label used only before the period for all time, not within it', async () => {
    const values = async (period?: PeriodName) =>
      (
        await listDimensionValues(
          deps,
          {
            business: 'acme',
            dimension: 'project',
            timezone: 'UTC',
            prefix: 'leg',
            limit: 10,
            ...(period ? { period } : {}),
          },
          ctx,
        )
      ).data;
    expect(await values()).toEqual([{ value: 'Legacy', facts: 1 }]);
    expect(await values('this_month')).toEqual([]);
  });

  it('picks a keystroke from a list of the period, or reads it alone past the list cap', async () => {
    // More projects in one week than a kept list holds: the keystroke is read on its own.
    const wide = Array.from({ length: LIST_CAP + 1 }, (_, i) => ({
      ...(facts[0] as Fact),
      fact_id: 1_000_000 + i,
      business: 'wide',
      task_gid: `w${i}`,
      occurred_at: chTime(NOW.getTime() - 86_400_000 - i * 1_000),
      project: `p-${i % 2 === 0 ? 'even' : 'odd'}-${i}`,
    }));
    await engines.clickhouse.client.insert({ table: 'facts', values: wide, format: 'JSONEachRow' });
    const input = {
      business: 'wide',
      dimension: 'project' as const,
      timezone: 'Asia/Kathmandu',
      period: 'last_7_days' as const,
      prefix: 'P-ODD-1',
      limit: 3,
    };
    const answer = await listDimensionValues(deps, input, ctx);
    expect(answer.metadata.source).toBe('facts');
    expect(answer.data).toEqual(
      expectedValues(wide, 'wide', 'project', {
        period: resolvePeriod('last_7_days', NOW, 'Asia/Kathmandu'),
        prefix: 'P-ODD-1',
        limit: 3,
      }),
    );
    expect(answer.data).toHaveLength(3);

    // A list in the statement's order, picked by prefix without regard to case.
    const list = {
      values: [
        { value: 'beta', facts: 9 },
        { value: 'Alpha', facts: 5 },
        { value: 'alpine', facts: 5 },
        { value: 'ALPS', facts: 1 },
      ],
      complete: true,
      partial: false,
      watermark: 'w1',
      computedAt: NOW.getTime(),
      dataAsOf: NOW.toISOString(),
    };
    expect(pickValues(list, 'AL', 2)).toEqual([
      { value: 'Alpha', facts: 5 },
      { value: 'alpine', facts: 5 },
    ]);
    expect(pickValues(list, '', 10)).toEqual(list.values);
    expect(pickValues(list, 'z', 10)).toEqual([]);
    // Kept while nothing is projected; once facts move on, only a short while.
    const later = (ms: number) => NOW.getTime() + ms;
    expect(listHolds(list, 'w1', later(3_600_000))).toBe(true);
    expect(listHolds(list, 'w2', later(LIST_HOLD_MS - 1))).toBe(true);
    expect(listHolds(list, 'w2', later(LIST_HOLD_MS))).toBe(false);
  });

  it('answers a business outside the caller as one that does not exist', async () => {
    const refused = listDimensionValues(
      deps,
      { business: 'acme', dimension: 'project', timezone: 'UTC', limit: 5 },
      { ...ctx, businesses: ['other'] },
    );
    await expect(refused).rejects.toBeInstanceOf(AppError);
    await expect(refused).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('GET /api/v1/businesses/{business}/dimensions/{dimension}/values', () => {
  const cairn = useCairn({ businesses: ['acme'], scopes: ['analytics:read'] });
  const path = (dimension: string, search = '', business = 'acme') =>
    `/api/v1/businesses/${business}/dimensions/${dimension}/values${search}`;
  const get = (url: string, headers: Record<string, string> = cairn.auth) =>
    http(cairn.url, 'GET', url, { headers });

  beforeAll(async () => {
    const writer = await cairn.token({ scopes: ['workflows:write'], businesses: ['acme'] });
    for (const project of ['Apollo', 'apex', 'apex', 'Zeus']) {
      const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
        body: { business: 'acme', name: `Task in ${project}`, project, assignee: 'ann' },
        headers: writer,
      });
      expect(res.status).toBe(201);
    }
    // The projector runs beside the API: wait until the four creations are counted.
    await waitFor(
      async () => {
        const res = await get(path('project'), { ...cairn.auth, 'Cache-Control': 'no-cache' });
        return res.body.data?.length === 3;
      },
      { timeoutMs: 60_000 },
    );
  }, 90_000);

  it('lists values most used first, by prefix without regard to case, bounded', async () => {
    const res = await get(path('project', '?prefix=AP&period=last_7_days&limit=5'));
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { value: 'apex', facts: 2 },
      { value: 'Apollo', facts: 1 },
    ]);
    expect(res.body.metadata).toMatchObject({
      business: 'acme',
      dimension: 'project',
      prefix: 'AP',
      limit: 5,
      row_count: 2,
      period: { name: 'last_7_days', timezone: 'UTC' },
    });
    expect(res.body.metadata.source).toMatch(/^rollup_|^facts$/);
    const one = await get(path('project', '?limit=1'));
    expect(one.body.data).toEqual([{ value: 'apex', facts: 2 }]);
    expect(one.body.metadata.period).toBeNull();
  });

  it('answers a repeat from the cache while no fact is projected', async () => {
    const first = await get(path('assignee'));
    const second = await get(path('assignee'));
    expect(first.body.data).toEqual([{ value: 'ann', facts: 4 }]);
    expect(second.body.data).toEqual(first.body.data);
    expect(second.body.metadata.cache).toBe('hit');
  });

  it('answers the keystrokes of a type-ahead in a zone no rollup keeps from one read of the facts', async () => {
    // Kathmandu's days start at a quarter hour in UTC: projects there are counted on facts.
    const search = (prefix: string) =>
      `?period=last_7_days&timezone=Asia/Kathmandu&limit=5&prefix=${prefix}`;
    const typed = ['', 'a', 'ap', 'apo', 'Z', 'zeus', 'x'];
    const answers: Array<{ data: unknown; metadata: Record<string, unknown> }> = [];
    for (const prefix of typed) answers.push((await get(path('project', search(prefix)))).body);
    expect(answers.map((answer) => answer.metadata.source)).toEqual(typed.map(() => 'facts'));
    // The first keystroke reads the period's values once; every later one is picked from them.
    expect(answers.map((answer) => answer.metadata.cache)).toEqual([
      'miss',
      ...typed.slice(1).map(() => 'hit'),
    ]);
    expect(answers[2]?.data).toEqual([
      { value: 'apex', facts: 2 },
      { value: 'Apollo', facts: 1 },
    ]);
    expect(answers[5]?.data).toEqual([{ value: 'Zeus', facts: 1 }]);
    // Each the answer a fresh read gives.
    for (const [i, prefix] of typed.entries()) {
      const fresh = await get(path('project', search(prefix)), {
        ...cairn.auth,
        'Cache-Control': 'no-cache',
      });
      expect(fresh.body.metadata.cache).toBe('miss');
      expect(fresh.body.data, prefix).toEqual(answers[i]?.data);
    }
  });

  it.each([
    [path('day'), ['path', 'dimension'], 'enum'],
    [path('business'), ['path', 'dimension'], 'enum'],
    [path('project', '?period=last_decade'), ['query', 'period'], 'enum'],
    [path('project', '?limit=101'), ['query', 'limit'], 'less_than_equal'],
    [path('project', '?limit=0'), ['query', 'limit'], 'greater_than_equal'],
    [path('project', '?limit=1e1'), ['query', 'limit'], 'int_parsing'],
    [path('project', '?timezone=Mars/Olympus'), ['query', 'timezone'], 'timezone'],
    [path('project', '?sort=value'), ['query', 'sort'], 'extra_forbidden'],
    [path('project', '', 'not%20a%20name'), ['path', 'business'], 'string_pattern_mismatch'],
  ])('422 for %s at %j', async (url, loc, type) => {
    const res = await get(url);
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body.detail).toEqual([expect.objectContaining({ loc, type })]);
  });

  it('404 for a business outside the token, 403 without analytics:read, 401 without a token', async () => {
    const elsewhere = await get(path('project', '', 'globex'));
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const writer = await cairn.token({ scopes: ['workflows:read'], businesses: ['acme'] });
    expect((await get(path('project'), writer)).status).toBe(403);
    expect((await get(path('project'), {})).status).toBe(401);
  });
});
