import { beforeAll, describe, expect, it } from 'vitest';
import type { FactRow } from '../../libs/projection/fact-rows.ts';
import { projectAll } from '../support/analytics.ts';
import { useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';

/** Sorts between its neighbours, so its first and last granules are shared with theirs. */
const OWN = 'm-acme';
const BEFORE = 'm-acl';
const AFTER = 'm-acn';
const OPEN = ['open', 'in_progress'];
const DAY_MS = 86_400_000;

/** A fact as the test reads it back, with `occurred_at` as ClickHouse prints it (UTC). */
type OwnFact = Pick<
  FactRow,
  | 'kind'
  | 'business'
  | 'task_gid'
  | 'occurred_at'
  | 'project'
  | 'assignee'
  | 'status'
  | 'previous_status'
  | 'dependency_gid'
>;

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
const dayOf = (fact: OwnFact) => fact.occurred_at.slice(0, 10);
const inPeriod = (fact: OwnFact, period: { from: string; to: string }) => {
  const at = Date.parse(`${fact.occurred_at.replace(' ', 'T')}Z`);
  return at >= Date.parse(period.from) && at < Date.parse(period.to);
};

/**
 * rollup_business_day's rows for `facts` once merged, worked out from the facts alone: each fact
 * under its day and status, and a fact that ends an open state also under its previous status.
 */
function dailyStatusRows(facts: OwnFact[]): Array<{ business: string; status: string }> {
  const keys = new Map<string, { business: string; status: string }>();
  for (const fact of facts) {
    const labels = [fact.status];
    const ends = ['task_updated', 'task_deleted'].includes(fact.kind);
    if (ends && OPEN.includes(fact.previous_status)) labels.push(fact.previous_status);
    for (const status of labels) {
      keys.set(`${dayOf(fact)}|${status}`, { business: fact.business, status });
    }
  }
  return [...keys.values()];
}

/**
 * Each query and, by hand from the definition, what it reads: for every statement, the caller's
 * rows in the ranges it scans, each sized by the columns the statement names (strings by their
 * length, `slot` 4, `occurred_at`, `fact_id` and each rollup value 8, `due_on` 4).
 */
interface Shape {
  name: string;
  body: Record<string, unknown>;
  source: string;
  expected(facts: OwnFact[], period: { from: string; to: string }): Figures;
}
interface Figures {
  rows_read: number;
  bytes_read: number;
}

const SHAPES: Shape[] = [
  {
    name: 'flows by day on a rollup, with totals',
    body: {
      metrics: ['tasks_created', 'tasks_completed'],
      dimensions: ['day'],
      period: 'last_7_days',
      include: ['totals'],
    },
    source: 'rollup_business_day',
    // Rows and totals each read the period's slots, naming business, slot, created, completed
    // and facts.
    expected(facts, period) {
      const rows = dailyStatusRows(facts.filter((fact) => inPeriod(fact, period)));
      const size = rows.reduce((sum, row) => sum + bytes(row.business) + 4 + 3 * 8, 0);
      return { rows_read: 2 * rows.length, bytes_read: 2 * size };
    },
  },
  {
    name: 'completion rate by project on the rollup keeping completions',
    body: { metrics: ['completion_rate'], dimensions: ['project'], period: 'last_7_days' },
    source: 'rollup_projects_blocked_day',
    // The period's slots, naming business, slot, project, created, facts and completed_by; every
    // task here is in one project, so its rows are those of the day and status rollup.
    expected(facts, period) {
      const rows = dailyStatusRows(facts.filter((fact) => inPeriod(fact, period)));
      const size = rows.reduce((sum, row) => sum + bytes(row.business) + 4 + 5 + 3 * 8, 0);
      return { rows_read: rows.length, bytes_read: size };
    },
  },
  {
    name: 'open tasks by status on a rollup',
    body: { metrics: ['open_tasks'], dimensions: ['status'], period: 'last_30_days' },
    source: 'rollup_business_day',
    // Every slot before the period's end, naming business, slot, status and open_change.
    expected(facts) {
      const rows = dailyStatusRows(facts);
      const size = rows.reduce(
        (sum, row) => sum + bytes(row.business) + bytes(row.status) + 4 + 8,
        0,
      );
      return { rows_read: rows.length, bytes_read: size };
    },
  },
  {
    // Filtered by assignee, which no rollup keeping blocked changes has: read from facts.
    name: 'blocked and open tasks on facts, with totals',
    body: {
      metrics: ['blocked_tasks', 'open_tasks'],
      include: ['totals'],
      filters: [{ dimension: 'assignee', op: 'neq', values: ['nobody'] }],
    },
    source: 'facts',
    // Rows and totals each read every fact before now, naming kind, business, task_gid,
    // project, assignee, status, dependency_gid, fact_id, occurred_at and due_on.
    expected(facts) {
      const size = facts.reduce(
        (sum, fact) =>
          sum +
          [
            fact.kind,
            fact.business,
            fact.task_gid,
            fact.project,
            fact.assignee,
            fact.status,
            fact.dependency_gid,
          ].reduce((n, text) => n + bytes(text), 0) +
          8 +
          8 +
          4,
        0,
      );
      return { rows_read: 2 * facts.length, bytes_read: 2 * size };
    },
  },
];

/** Facts of one business spread over the last 60 days, written straight into ClickHouse. */
const NEIGHBOUR_FACTS = `
INSERT INTO facts (fact_id, kind, business, task_gid, occurred_at, project, assignee, status,
  previous_status, task_created_at)
SELECT {base:UInt64} + number, ['task_created', 'task_updated', 'task_completed', 'dependency_added'][number % 4 + 1],
  {business:String}, concat({business:String}, '-', toString(intDiv(number, 4))),
  now64(3) - toIntervalMillisecond(number * 7919 % ${60 * DAY_MS}), 'beta', 'bob',
  ['open', 'in_progress', 'completed', 'open'][number % 4 + 1], 'open', now64(3) - toIntervalDay(61)
FROM numbers({count:UInt64})`;

describe('metadata rows_read and bytes_read count only the caller’s own rows', () => {
  const cairn = useCairn({
    businesses: [OWN],
    scopes: ['analytics:read', 'workflows:write'],
  });
  const query = (body: unknown) =>
    http(cairn.url, 'POST', '/api/v1/query', {
      body,
      headers: { ...cairn.auth, 'Cache-Control': 'no-cache' },
    });
  const ask = async (shape: Shape) => {
    const res = await query(shape.body);
    expect(res.status, shape.name).toBe(200);
    expect(res.body.metadata.source, shape.name).toBe(shape.source);
    return res.body.metadata;
  };
  const first = new Map<string, Figures>();

  beforeAll(async () => {
    const create = async (name: string) => {
      const res = await http(cairn.url, 'POST', '/api/v1/tasks', {
        body: { business: OWN, name, project: 'alpha', assignee: 'ann' },
        headers: cairn.auth,
      });
      expect(res.status).toBe(201);
      return res.body.data.gid as string;
    };
    const gids: string[] = [];
    for (let i = 0; i < 6; i++) gids.push(await create(`t${i}`));
    const put = async (gid: string | undefined, body: unknown) => {
      const res = await http(cairn.url, 'PUT', `/api/v1/tasks/${gid}`, {
        body,
        headers: cairn.auth,
      });
      expect(res.status).toBe(200);
    };
    await put(gids[0], { status: 'completed' });
    await put(gids[1], { status: 'in_progress' });
    await put(gids[2], { status: 'cancelled' });
    const dependency = await http(cairn.url, 'POST', `/api/v1/tasks/${gids[3]}/dependencies`, {
      body: { dependencies: [gids[4]] },
      headers: cairn.auth,
    });
    expect(dependency.status).toBe(200);
    await projectAll(cairn.engines);
    for (const shape of SHAPES) {
      const { rows_read, bytes_read } = await ask(shape);
      first.set(shape.name, { rows_read, bytes_read });
    }

    // Neighbours sorting just before and after, far larger and of different sizes, then every
    // part merged: the granules at the edges of the caller's rows now hold their rows too.
    const clickhouse = cairn.engines.clickhouse.client;
    for (const [business, count, base] of [
      [BEFORE, 230_000, 5e15],
      [AFTER, 410_000, 6e15],
    ] as const) {
      await clickhouse.command({
        query: NEIGHBOUR_FACTS,
        query_params: { business, count, base },
      });
    }
    for (const table of [
      'facts',
      'rollup_business_day',
      'rollup_projects_blocked_day',
      'rollup_business_blocked_15m',
      'rollup_labels_day',
    ]) {
      await clickhouse.command({ query: `OPTIMIZE TABLE ${table} FINAL` });
    }
  }, 300_000);

  it.each(SHAPES)('$name: the same figures whatever the neighbours hold', async (shape) => {
    const { rows_read, bytes_read } = await ask(shape);
    expect(rows_read).toBeGreaterThan(0);
    expect({ rows_read, bytes_read }).toEqual(first.get(shape.name));
  });

  it.each(SHAPES)(
    '$name: the figures the definition gives over the caller’s rows',
    async (shape) => {
      const metadata = await ask(shape);
      const result = await cairn.engines.clickhouse.client.query({
        query:
          'SELECT kind, business, task_gid, toString(occurred_at) AS occurred_at, project, assignee, status, previous_status, dependency_gid FROM facts WHERE business = {business:String}',
        query_params: { business: OWN },
        format: 'JSONEachRow',
      });
      const facts = await result.json<OwnFact>();
      expect(facts.length).toBe(11);
      expect({ rows_read: metadata.rows_read, bytes_read: metadata.bytes_read }).toEqual(
        shape.expected(facts, metadata.query.period),
      );
    },
  );
});
