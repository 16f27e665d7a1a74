// Oracle: seeded random task histories go through the write side and the projector; every
// metric × dimension × period from ClickHouse must equal an independent TypeScript computation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DIMENSION_NAMES,
  type DimensionName,
  METRIC_NAMES,
  METRICS,
  type MetricName,
} from '../libs/analytics/catalog.ts';
import { PERIODS, resolvePeriod, startOfDay } from '../libs/analytics/period.ts';
import { type AnalyticsDeps, runQuery } from '../libs/analytics/query.service.ts';
import type { QueryFilter } from '../libs/analytics/query-parser.ts';
import type { Principal } from '../libs/auth/principal.ts';
import { drainOutbox } from '../libs/projection/projector.ts';
import type { TaskStatus } from '../libs/storage/database.ts';
import { type Engines, openEngines } from '../libs/storage/engines.ts';
import { addDependencies, removeDependency } from '../libs/tasks/dependency.service.ts';
import { createTask, deleteTask, updateTask } from '../libs/tasks/task.service.ts';
import { type TestConfig, testConfig } from './support/engines.ts';

// After Paris (10-25) and New York (11-01) leave summer time: periods straddle both changes.
const NOW = new Date('2026-11-02T12:00:00Z');
const START = Date.parse('2026-09-20T00:00:00Z');
const SEEDS = [1, 7, 42];
const ZONES = ['UTC', 'Europe/Paris', 'America/New_York'];
const STATUSES: TaskStatus[] = ['open', 'in_progress', 'completed', 'cancelled'];
const PROJECTS = ['alpha', 'beta', null];
const PEOPLE = ['ann', 'bob', 'cy', null];
const MASTER: Principal = { kind: 'master' };

interface ModelFact {
  kind: string;
  business: string;
  task: string;
  at: number;
  project: string;
  assignee: string;
  status: string;
  previous: string;
  due: string | null;
  createdAt: number;
  dep: string;
}
interface ModelTask {
  gid: string;
  business: string;
  project: string | null;
  assignee: string | null;
  status: TaskStatus;
  due_on: string | null;
  createdAt: number;
}

function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T,
  };
}

// ---- the independent computation -------------------------------------------------------------
const localDate = (ms: number, tz: string) =>
  new Intl.DateTimeFormat('en-CA', {
    timeZone: tz,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(ms);
function timeLabel(dimension: DimensionName, ms: number, tz: string): string {
  const [y, m, d] = localDate(ms, tz).split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  if (dimension === 'week') date.setUTCDate(d - ((date.getUTCDay() + 6) % 7));
  if (dimension === 'month') date.setUTCDate(1);
  if (dimension === 'quarter') date.setUTCMonth(m - 1 - ((m - 1) % 3), 1);
  return date.toISOString().slice(0, 10);
}
const isTime = (d: DimensionName) => ['day', 'week', 'month', 'quarter'].includes(d);
function label(
  d: DimensionName,
  row: { business: string; project: string; assignee: string; status: string },
  ms: number,
  tz: string,
) {
  return isTime(d)
    ? timeLabel(d, ms, tz)
    : row[d as 'business' | 'project' | 'assignee' | 'status'];
}
const passes = (filters: QueryFilter[], value: (d: DimensionName) => string) =>
  filters.every((f) => {
    const hit = f.values.includes(value(f.dimension));
    return f.op === 'eq' || f.op === 'in' ? hit : !hit;
  });
function quantile(sorted: number[], p: number): number {
  const h = (sorted.length - 1) * p;
  const lo = Math.floor(h);
  return (
    (sorted[lo] as number) +
    (h - lo) * ((sorted[Math.min(lo + 1, sorted.length - 1)] as number) - (sorted[lo] as number))
  );
}

type Row = Record<string, string | number | null>;

function expected(
  facts: ModelFact[],
  metrics: MetricName[],
  dims: DimensionName[],
  periodName: (typeof PERIODS)[number],
  tz: string,
  filters: QueryFilter[],
): Row[] {
  const period = resolvePeriod(periodName, NOW, tz);
  const [from, to] = [period.from.getTime(), period.to.getTime()];
  const groups = new Map<
    string,
    { key: Row; flow: ModelFact[]; state: Array<{ f: ModelFact; at: number; blocked: boolean }> }
  >();
  const group = (key: Row) => {
    const id = JSON.stringify(key);
    if (!groups.has(id)) groups.set(id, { key, flow: [], state: [] });
    return groups.get(id)!;
  };
  const wantFlow = metrics.some((m) => METRICS[m].source === 'flow');
  const wantState = metrics.some((m) => METRICS[m].source === 'state');
  if (dims.length === 0) group({});
  if (wantFlow) {
    for (const f of facts) {
      if (f.at < from || f.at >= to || !passes(filters, (d) => label(d, f, f.at, tz))) continue;
      group(Object.fromEntries(dims.map((d) => [d, label(d, f, f.at, tz)]))).flow.push(f);
    }
  }
  if (wantState) {
    const timeDim = dims.find(isTime);
    // Bucket instants: the end of each time bucket inside the period (or now), read independently.
    const instants: Array<{ key: string; start: number; at: number }> = [];
    const first = periodName === 'all_time' ? Math.min(...facts.map((f) => f.at)) : from;
    for (let d = Date.parse(localDate(first, tz)) / 86_400_000; ; d++) {
      const dayStart = startOfDay(d, tz).getTime();
      if (dayStart >= to || dayStart >= NOW.getTime()) break;
      const at = Math.min(startOfDay(d + 1, tz).getTime(), to, NOW.getTime());
      const key = timeDim ? timeLabel(timeDim, dayStart, tz) : 'whole period';
      const last = instants.at(-1);
      if (last?.key === key) last.at = at;
      else instants.push({ key, start: Math.max(dayStart, from), at });
    }
    for (const { start, at } of instants) {
      const latest = new Map<string, ModelFact>();
      const edges = new Map<string, boolean>();
      for (const f of facts) {
        if (f.at >= at) continue;
        latest.set(f.task, f);
        if (f.kind === 'dependency_added' || f.kind === 'dependency_removed')
          edges.set(`${f.task} ${f.dep}`, f.kind === 'dependency_added');
      }
      const isOpen = (f: ModelFact | undefined) =>
        !!f && f.kind !== 'task_deleted' && (f.status === 'open' || f.status === 'in_progress');
      for (const f of latest.values()) {
        if (!isOpen(f) || !passes(filters, (d) => label(d, f, start, tz))) continue;
        const blocked = [...edges].some(
          ([edge, on]) =>
            on && edge.startsWith(`${f.task} `) && isOpen(latest.get(edge.split(' ')[1] as string)),
        );
        group(Object.fromEntries(dims.map((d) => [d, label(d, f, start, tz)]))).state.push({
          f,
          at,
          blocked,
        });
      }
    }
  }
  const completedBefore = new Set(
    facts.filter((f) => f.kind === 'task_completed' && f.at < to).map((f) => f.task),
  );
  return [...groups.values()].map(({ key, flow, state }) => {
    const count = (kind: string) => flow.filter((f) => f.kind === kind).length;
    const cycles = flow
      .filter((f) => f.kind === 'task_completed')
      .map((f) => (f.at - f.createdAt) / 3_600_000)
      .sort((a, b) => a - b);
    const created = flow.filter((f) => f.kind === 'task_created');
    const all: Record<MetricName, number | null> = {
      tasks_created: created.length,
      tasks_completed: count('task_completed'),
      tasks_cancelled: flow.filter(
        (f) =>
          (f.kind === 'task_created' || f.kind === 'task_updated') &&
          f.status === 'cancelled' &&
          f.previous !== 'cancelled',
      ).length,
      completion_rate:
        created.length === 0
          ? 0
          : created.filter((f) => completedBefore.has(f.task)).length / created.length,
      avg_cycle_time_hours: cycles.length
        ? cycles.reduce((a, b) => a + b, 0) / cycles.length
        : null,
      p50_cycle_time_hours: cycles.length ? quantile(cycles, 0.5) : null,
      p90_cycle_time_hours: cycles.length ? quantile(cycles, 0.9) : null,
      dependencies_added: count('dependency_added'),
      dependencies_removed: count('dependency_removed'),
      active_assignees: new Set(flow.map((f) => f.assignee).filter(Boolean)).size,
      open_tasks: state.length,
      overdue_tasks: state.filter(({ f, at }) => f.due !== null && f.due < localDate(at, tz))
        .length,
      blocked_tasks: state.filter((s) => s.blocked).length,
    };
    return { ...key, ...Object.fromEntries(metrics.map((m) => [m, all[m]])) };
  });
}

// ---- the history, written through the write side and mirrored in the model -----------------
async function simulate(
  engines: Engines,
  seed: number,
): Promise<{ facts: ModelFact[]; businesses: string[] }> {
  const random = prng(seed);
  let clock = START;
  const deps = {
    db: engines.postgres.db,
    now: () => new Date(clock),
    factsCommitted: () => {},
    cursorKey: Buffer.alloc(32, seed),
  };
  const businesses = [`s${seed}_north`, `s${seed}_south`];
  const tasks = new Map<string, ModelTask>();
  const edges = new Set<string>();
  const facts: ModelFact[] = [];
  const emit = (kind: string, t: ModelTask, previous: string | null = null, dep = '') =>
    facts.push({
      kind,
      business: t.business,
      task: t.gid,
      at: clock,
      project: t.project ?? '',
      assignee: t.assignee ?? '',
      status: t.status,
      previous: previous ?? '',
      due: t.due_on,
      createdAt: t.createdAt,
      dep,
    });
  const span = NOW.getTime() - 3_600_000 - START;
  const times = Array.from({ length: 160 }, () => START + Math.floor(random.next() * span));
  // Land some writes right around the DST changes and local midnights.
  times.push(
    Date.parse('2026-10-25T00:59:59.999Z'),
    Date.parse('2026-10-25T01:00:00Z'),
    Date.parse('2026-11-01T05:30:00Z'),
    Date.parse('2026-11-01T06:00:00Z'),
    Date.parse('2026-10-31T23:00:00Z'),
    Date.parse('2026-10-31T22:59:59.999Z'),
  );
  for (const time of [...new Set(times)].sort((a, b) => a - b)) {
    clock = time;
    const live = [...tasks.values()];
    const roll = random.next();
    if (live.length < 4 || roll < 0.35) {
      const status = random.next() < 0.8 ? 'open' : random.pick(STATUSES);
      const due =
        random.next() < 0.6
          ? new Date(START + Math.floor(random.next() * span * 1.1)).toISOString().slice(0, 10)
          : null;
      const row = await createTask(deps, {
        business: random.pick(businesses),
        name: 'task',
        project: random.pick(PROJECTS),
        assignee: random.pick(PEOPLE),
        status,
        due_on: due,
      });
      const t: ModelTask = {
        gid: row.gid,
        business: row.business,
        project: row.project,
        assignee: row.assignee,
        status,
        due_on: due,
        createdAt: clock,
      };
      tasks.set(t.gid, t);
      emit('task_created', t);
      if (status === 'completed') emit('task_completed', t);
    } else if (roll < 0.7) {
      const t = random.pick(live);
      const before = t.status;
      const member = random.pick(['status', 'status', 'project', 'assignee', 'due_on'] as const);
      const input: Record<string, unknown> = {};
      if (member === 'status')
        t.status = input.status = random.pick(STATUSES.filter((s) => s !== t.status));
      if (member === 'project')
        t.project = input.project = random.pick(PROJECTS.filter((p) => p !== t.project));
      if (member === 'assignee')
        t.assignee = input.assignee = random.pick(PEOPLE.filter((p) => p !== t.assignee));
      if (member === 'due_on')
        t.due_on = input.due_on = t.due_on === '2026-10-30' ? '2026-11-05' : '2026-10-30';
      await updateTask(deps, t.gid, input, MASTER);
      emit('task_updated', t, before);
      if (t.status === 'completed' && before !== 'completed') emit('task_completed', t, before);
    } else if (roll < 0.87) {
      // Edges point from newer to older tasks of one business, so they never close a cycle.
      const t = random.pick(live);
      const older = live.filter(
        (o) =>
          o.business === t.business && o.createdAt < t.createdAt && !edges.has(`${t.gid} ${o.gid}`),
      );
      if (older.length === 0) continue;
      const dep = random.pick(older);
      await addDependencies(deps, t.gid, [dep.gid], MASTER);
      edges.add(`${t.gid} ${dep.gid}`);
      emit('dependency_added', t, null, dep.gid);
    } else if (roll < 0.95 && edges.size > 0) {
      const edge = random.pick([...edges]);
      const [gid, dep] = edge.split(' ') as [string, string];
      await removeDependency(deps, gid, dep, MASTER);
      edges.delete(edge);
      emit('dependency_removed', tasks.get(gid) as ModelTask, null, dep);
    } else {
      const t = random.pick(live);
      await deleteTask(deps, t.gid, MASTER);
      for (const edge of [...edges].filter((e) => e.split(' ').includes(t.gid))) {
        const [gid, dep] = edge.split(' ') as [string, string];
        edges.delete(edge);
        emit('dependency_removed', tasks.get(gid) as ModelTask, null, dep);
      }
      emit('task_deleted', t, t.status);
      tasks.delete(t.gid);
    }
  }
  return { facts, businesses };
}

const DIMENSION_SETS: DimensionName[][] = [
  [],
  ...DIMENSION_NAMES.map((d) => [d]),
  ['project', 'day'],
  ['status', 'assignee', 'week'],
];
const FLOW = METRIC_NAMES.filter((m) => METRICS[m].source === 'flow');
const OPEN_COUNTS: MetricName[] = ['open_tasks', 'overdue_tasks'];
const STATE = METRIC_NAMES.filter((m) => METRICS[m].source === 'state');

function compare(actual: Row[], wanted: Row[], context: string) {
  const byKey = (rows: Row[], dims: string[]) =>
    new Map(rows.map((r) => [JSON.stringify(dims.map((d) => r[d])), r]));
  const dims = Object.keys(wanted[0] ?? actual[0] ?? {}).filter((k) => !(k in METRICS));
  const got = byKey(actual, dims);
  const want = byKey(wanted, dims);
  expect([...got.keys()].sort(), context).toEqual([...want.keys()].sort());
  for (const [key, row] of want) {
    for (const [name, value] of Object.entries(row)) {
      const other = got.get(key)?.[name];
      if (typeof value === 'number' && METRICS[name as MetricName]?.type === 'number') {
        expect(other, `${context} ${key} ${name}`).toBeTypeOf('number');
        expect(Math.abs((other as number) - value), `${context} ${key} ${name}`).toBeLessThan(
          1e-9 * Math.max(1, Math.abs(value)),
        );
      } else expect(other, `${context} ${key} ${name}`).toEqual(value);
    }
  }
}

describe('analytics oracle: ClickHouse answers equal an independent computation', () => {
  let setup: TestConfig;
  let engines: Engines;
  let deps: AnalyticsDeps;
  beforeAll(async () => {
    setup = await testConfig();
    engines = await openEngines(setup.config);
    deps = {
      db: engines.postgres.db,
      clickhouse: engines.clickhouse.client,
      now: () => NOW,
      maxRows: 10_000,
      timeoutMs: 60_000,
      staleAfterMs: 60_000,
    };
  });
  afterAll(async () => {
    await engines.close();
    await setup.cleanup();
  });

  it.each(SEEDS.map((seed, i) => [seed, ZONES[i % ZONES.length] as string]))(
    'seed %i in %s',
    async (seed, tz) => {
      const { facts, businesses } = await simulate(engines, seed);
      // The history exercises every kind of fact, or the comparison would prove little.
      expect(new Set(facts.map((f) => f.kind))).toEqual(
        new Set([
          'task_created',
          'task_updated',
          'task_completed',
          'task_deleted',
          'dependency_added',
          'dependency_removed',
        ]),
      );
      await drainOutbox({
        db: engines.postgres.db,
        clickhouse: engines.clickhouse.client,
        batchSize: 500,
      });
      const ctx = { signal: new AbortController().signal, businesses };
      const check = async (
        metrics: MetricName[],
        dims: DimensionName[],
        period: (typeof PERIODS)[number],
        filters: QueryFilter[] = [],
      ) => {
        const answer = await runQuery(
          deps,
          { metrics, dimensions: dims, period, timezone: tz, filters },
          ctx,
        );
        compare(
          answer.data as Row[],
          expected(facts, metrics, dims, period, tz, filters),
          `${metrics.length}m ${dims.join('+')} ${period} ${JSON.stringify(filters)}`,
        );
      };
      for (const period of PERIODS) {
        for (const dims of DIMENSION_SETS) await check(METRIC_NAMES, dims, period);
      }
      for (const dims of DIMENSION_SETS) {
        await check(FLOW, dims, 'last_30_days');
        await check(STATE, dims, 'last_month');
      }
      // Without blocked_tasks, open and overdue counts come from summed changes of state
      // rather than per-task spans: both ways must agree with the oracle everywhere.
      for (const period of PERIODS) {
        for (const dims of DIMENSION_SETS) await check(OPEN_COUNTS, dims, period);
      }
      await check(['tasks_created', ...OPEN_COUNTS], ['week'], 'last_90_days', [
        { dimension: 'project', op: 'not_in', values: ['alpha'] },
        { dimension: 'status', op: 'eq', values: ['open'] },
      ]);
      await check(METRIC_NAMES, ['day'], 'last_30_days', [
        { dimension: 'project', op: 'in', values: ['alpha', ''] },
      ]);
      await check(METRIC_NAMES, ['status'], 'all_time', [
        { dimension: 'assignee', op: 'neq', values: ['bob'] },
      ]);
      await check(METRIC_NAMES, [], 'this_month', [
        { dimension: 'day', op: 'not_in', values: ['2026-11-01'] },
      ]);
      await check(METRIC_NAMES, ['assignee'], 'last_90_days', [
        { dimension: 'business', op: 'eq', values: [businesses[0] as string] },
      ]);
    },
  );
});
