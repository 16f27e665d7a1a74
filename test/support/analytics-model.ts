// The independent computation the analytics oracles compare ClickHouse with: seeded random task
// histories written through the write side and mirrored here as plain facts, and every metric
// computed from those facts by straightforward TypeScript.
import { expect } from 'vitest';
import {
  type DimensionName,
  METRICS,
  type MetricName,
} from '../../libs/analytics/catalog/catalog.ts';
import type { QueryFilter } from '../../libs/analytics/parse/query-parser.ts';
import { startOfDay } from '../../libs/analytics/period/period.ts';
import type { Principal } from '../../libs/auth/principal.ts';
import type { Engines } from '../../libs/storage/engines.ts';
import { addDependencies, removeDependency } from '../../libs/tasks/dependency.service.ts';
import { createTask, deleteTask, updateTask } from '../../libs/tasks/task.service.ts';
import { TASK_STATUSES, type TaskStatus } from '../../libs/tasks/task-status.ts';
import { inTaskUnit } from '../../libs/tasks/task-unit.ts';

const PROJECTS = ['alpha', 'beta', null];
const PEOPLE = ['ann', 'bob', 'cy', null];
const MASTER: Principal = { kind: 'master' };
const MINUTE = 60_000;
type WeekStart = 'monday' | 'sunday';

export interface ModelFact {
  kind: string;
  business: string;
  task: string;
  at: number;
  project: string | null;
  assignee: string | null;
  status: string;
  previous: string;
  due: string | null;
  createdAt: number;
  /** The task's first move to in_progress up to this fact (null: none yet). */
  startedAt: number | null;
  /** Completions: milliseconds the task spent blocked until this one (null on other facts). */
  blockedMs: number | null;
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
  startedAt: number | null;
  /** Blocked spells that ended, and the start of the current one. */
  blockedMs: number;
  blockedSince: number | null;
}

export function prng(seed: number) {
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

// ---- labels, read with Intl and nothing of the service's own period code -------------------
const formats = new Map<string, Intl.DateTimeFormat>();
function parts(ms: number, tz: string): Record<string, string> {
  let format = formats.get(tz);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      timeZoneName: 'longOffset',
    });
    formats.set(tz, format);
  }
  return Object.fromEntries(format.formatToParts(ms).map((p) => [p.type, p.value]));
}
export const localDate = (ms: number, tz: string) => {
  const p = parts(ms, tz);
  return `${p.year}-${p.month}-${p.day}`;
};
/** `2026-11-01T01:00:00-04:00`: the local hour with the zone's offset at that instant. */
function hourLabel(ms: number, tz: string): string {
  const p = parts(ms, tz);
  const offset = (p.timeZoneName ?? 'GMT').replace('GMT', '') || '+00:00';
  return `${p.year}-${p.month}-${p.day}T${p.hour}:00:00${offset}`;
}
/** A bucket's label; weeks start on Monday, or on Sunday with `week: 'sunday'`. */
export function timeLabel(
  dimension: DimensionName,
  ms: number,
  tz: string,
  week: WeekStart = 'monday',
): string {
  if (dimension === 'hour') return hourLabel(ms, tz);
  const [y, m, d] = localDate(ms, tz).split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  const back = week === 'sunday' ? date.getUTCDay() : (date.getUTCDay() + 6) % 7;
  if (dimension === 'week') date.setUTCDate(d - back);
  if (dimension === 'month') date.setUTCDate(1);
  if (dimension === 'quarter') date.setUTCMonth(m - 1 - ((m - 1) % 3), 1);
  return date.toISOString().slice(0, 10);
}
export const isTime = (d: DimensionName) => ['hour', 'day', 'week', 'month', 'quarter'].includes(d);
type Labelled = Pick<ModelFact, 'business' | 'project' | 'assignee' | 'status'>;
function label(d: DimensionName, row: Labelled, ms: number, tz: string, week?: WeekStart) {
  return isTime(d) ? timeLabel(d, ms, tz, week) : row[d as keyof Labelled];
}
/**
 * Whether a row passes the filters: every element holds; a group `{any}` when any of its elements
 * does. `contains`: some value is part of the label, ignoring case; a null label contains none.
 */
const passes = (filters: QueryFilter[], value: (d: DimensionName) => string | null): boolean =>
  filters.every((f) => holds(f, value));
function holds(f: QueryFilter, value: (d: DimensionName) => string | null): boolean {
  if ('any' in f) return f.any.some((element) => holds(element, value));
  const label = value(f.dimension);
  if (f.op === 'contains' || f.op === 'not_contains') {
    const text = (label ?? '').toLowerCase();
    const found =
      label !== null && f.values.some((v) => text.includes((v as string).toLowerCase()));
    return f.op === 'contains' ? found : !found;
  }
  const hit = f.values.includes(label);
  return f.op === 'eq' || f.op === 'in' ? hit : !hit;
}
function quantile(sorted: number[], p: number): number {
  const h = (sorted.length - 1) * p;
  const lo = Math.floor(h);
  return (
    (sorted[lo] as number) +
    (h - lo) * ((sorted[Math.min(lo + 1, sorted.length - 1)] as number) - (sorted[lo] as number))
  );
}

export type Row = Record<string, unknown>;

/** A period as instants; all_time starts with the first fact. */
export interface ModelPeriod {
  from: number;
  to: number;
  tz: string;
  allTime?: boolean;
  /** The day weeks start on (Monday when absent). */
  week?: WeekStart;
}

export interface ModelBucket {
  key: string;
  start: number;
  end: number;
}

/**
 * The buckets of a time dimension over a period: hours found by stepping through every quarter
 * hour (each hour of every zone starts on one), days by local calendar days, longer buckets by
 * merging consecutive days with the same label.
 */
export function modelBuckets(
  dimension: DimensionName | undefined,
  period: ModelPeriod,
  facts: ModelFact[],
): ModelBucket[] {
  const { tz, to } = period;
  const from = period.allTime ? Math.min(...facts.map((f) => f.at)) : period.from;
  const buckets: ModelBucket[] = [];
  const add = (key: string, start: number, end: number) => {
    const last = buckets.at(-1);
    if (last?.key === key) last.end = end;
    else buckets.push({ key, start, end });
  };
  if (!dimension) return from < to || period.allTime ? [{ key: '', start: from, end: to }] : [];
  if (dimension === 'hour') {
    const first = period.allTime ? from - (from % (15 * MINUTE)) : from;
    for (let t = first; t < to; ) {
      const next = Math.min(t - (t % (15 * MINUTE)) + 15 * MINUTE, to);
      add(hourLabel(t, tz), t, next);
      t = next;
    }
    return buckets;
  }
  for (let d = Date.parse(localDate(from, tz)) / 86_400_000; ; d++) {
    const dayStart = startOfDay(d, tz).getTime();
    if (dayStart >= to) break;
    const end = Math.min(startOfDay(d + 1, tz).getTime(), to);
    add(
      timeLabel(dimension, dayStart, tz, period.week),
      period.allTime ? dayStart : Math.max(dayStart, from),
      end,
    );
  }
  return buckets;
}

export function expected(
  facts: ModelFact[],
  metrics: MetricName[],
  dims: DimensionName[],
  period: ModelPeriod,
  now: number,
  filters: QueryFilter[] = [],
): Row[] {
  const { from, to, tz } = period;
  type Group = {
    key: Row;
    flow: ModelFact[];
    /** Open tasks at each bucket's end; `live`: with tasks_in_status, closed ones too. */
    state: Array<{ f: ModelFact; at: number; blocked: boolean }>;
    live: ModelFact[];
  };
  const groups = new Map<string, Group>();
  const group = (key: Row) => {
    const id = JSON.stringify(key);
    if (!groups.has(id)) groups.set(id, { key, flow: [], state: [], live: [] });
    return groups.get(id) as Group;
  };
  const timeDim = dims.find(isTime);
  const buckets = modelBuckets(timeDim, period, facts);
  const series = timeDim !== undefined && dims.length === 1;
  if (dims.length === 0) group({});
  if (series) for (const b of buckets) group({ [timeDim]: b.key });
  const flowFacts = facts.filter((f) => f.at >= (period.allTime ? 0 : from) && f.at < to);
  if (metrics.some((m) => METRICS[m].source === 'flow')) {
    for (const f of flowFacts) {
      if (!passes(filters, (d) => label(d, f, f.at, tz, period.week))) continue;
      group(Object.fromEntries(dims.map((d) => [d, label(d, f, f.at, tz, period.week)]))).flow.push(
        f,
      );
    }
  }
  if (metrics.some((m) => METRICS[m].source === 'state')) {
    for (const { start, end } of buckets) {
      if (start >= now) continue;
      const at = Math.min(end, now);
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
      const inStatus = metrics.includes('tasks_in_status');
      for (const f of latest.values()) {
        if (!passes(filters, (d) => label(d, f, start, tz, period.week))) continue;
        // An edge's fact carries its task's state as it stands, as a task's own facts do.
        if (inStatus && f.kind !== 'task_deleted') {
          group(
            Object.fromEntries(dims.map((d) => [d, label(d, f, start, tz, period.week)])),
          ).live.push(f);
        }
        if (!isOpen(f)) continue;
        const blocked = [...edges].some(
          ([edge, on]) =>
            on && edge.startsWith(`${f.task} `) && isOpen(latest.get(edge.split(' ')[1] as string)),
        );
        group(
          Object.fromEntries(dims.map((d) => [d, label(d, f, start, tz, period.week)])),
        ).state.push({
          f,
          at,
          blocked,
        });
      }
    }
  }
  // completion_rate: created in the row's bucket and completed in that same bucket.
  const bucketOf = (ms: number) => (timeDim ? timeLabel(timeDim, ms, tz, period.week) : '');
  const completedIn = new Set(
    flowFacts.filter((f) => f.kind === 'task_completed').map((f) => `${f.task} ${bucketOf(f.at)}`),
  );
  const futureBuckets = new Set(buckets.filter((b) => b.start >= now).map((b) => b.key));
  return [...groups.values()].map(({ key, flow, state, live }) => {
    const count = (kind: string) => flow.filter((f) => f.kind === kind).length;
    const cycles = flow
      .filter((f) => f.kind === 'task_completed')
      .map((f) => (f.at - f.createdAt) / 3_600_000)
      .sort((a, b) => a - b);
    const works = flow
      .filter((f) => f.kind === 'task_completed' && f.startedAt !== null)
      .map((f) => (f.at - (f.startedAt as number)) / 3_600_000)
      .sort((a, b) => a - b);
    const ages = state.map(({ f, at }) => (at - f.createdAt) / 3_600_000).sort((a, b) => a - b);
    const timed = flow.filter((f) => f.kind === 'task_completed' && f.blockedMs !== null);
    const blockedMs = timed.reduce((sum, f) => sum + (f.blockedMs as number), 0);
    const cycleMs = timed.reduce((sum, f) => sum + (f.at - f.createdAt), 0);
    const created = flow.filter((f) => f.kind === 'task_created');
    const future = timeDim !== undefined && futureBuckets.has(key[timeDim] as string);
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
          ? null
          : created.filter((f) => completedIn.has(`${f.task} ${bucketOf(f.at)}`)).length /
            created.length,
      avg_cycle_time_hours: cycles.length
        ? cycles.reduce((a, b) => a + b, 0) / cycles.length
        : null,
      p50_cycle_time_hours: cycles.length ? quantile(cycles, 0.5) : null,
      p85_cycle_time_hours: cycles.length ? quantile(cycles, 0.85) : null,
      p90_cycle_time_hours: cycles.length ? quantile(cycles, 0.9) : null,
      p95_cycle_time_hours: cycles.length ? quantile(cycles, 0.95) : null,
      avg_work_time_hours: works.length ? works.reduce((a, b) => a + b, 0) / works.length : null,
      p50_work_time_hours: works.length ? quantile(works, 0.5) : null,
      p85_work_time_hours: works.length ? quantile(works, 0.85) : null,
      avg_blocked_hours: timed.length ? blockedMs / timed.length / 3_600_000 : null,
      flow_efficiency: cycleMs === 0 ? null : 1 - blockedMs / cycleMs,
      dependencies_added: count('dependency_added'),
      dependencies_removed: count('dependency_removed'),
      active_assignees: new Set(flow.map((f) => f.assignee).filter(Boolean)).size,
      open_tasks: future ? null : state.length,
      tasks_in_status: future ? null : live.length,
      overdue_tasks: future
        ? null
        : state.filter(({ f, at }) => f.due !== null && f.due < localDate(at, tz)).length,
      blocked_tasks: future ? null : state.filter((s) => s.blocked).length,
      avg_age_hours:
        future || ages.length === 0 ? null : ages.reduce((a, b) => a + b, 0) / ages.length,
      p85_age_hours: future || ages.length === 0 ? null : quantile(ages, 0.85),
    };
    return { ...key, ...Object.fromEntries(metrics.map((m) => [m, all[m]])) };
  });
}

/** Rows equal as sets keyed by their labels; numbers of `number` metrics to 1e-9. */
export function expectRows(actual: Row[], wanted: Row[], context: string) {
  const dims = Object.keys(wanted[0] ?? actual[0] ?? {}).filter(
    (k) => !(k in METRICS) && k !== 'comparison' && k !== 'change',
  );
  const byKey = (rows: Row[]) =>
    new Map(rows.map((r) => [JSON.stringify(dims.map((d) => r[d])), r]));
  const got = byKey(actual);
  const want = byKey(wanted);
  expect([...got.keys()].sort(), context).toEqual([...want.keys()].sort());
  for (const [key, row] of want) expectValues(got.get(key) ?? {}, row, `${context} ${key}`);
}

/** Each wanted member equal, metrics and nested comparison/change objects to 1e-9. */
export function expectValues(actual: Row, wanted: Row, context: string) {
  for (const [name, value] of Object.entries(wanted)) {
    const other = actual[name];
    if (value !== null && typeof value === 'object') {
      expectValues((other ?? {}) as Row, value as Row, `${context} ${name}`);
    } else if (typeof value === 'number' && !Number.isInteger(value)) {
      expect(other, `${context} ${name}`).toBeTypeOf('number');
      expect(Math.abs((other as number) - value), `${context} ${name}`).toBeLessThan(
        1e-9 * Math.max(1, Math.abs(value)),
      );
    } else expect(other, `${context} ${name}`).toEqual(value);
  }
}

export interface History {
  facts: ModelFact[];
  businesses: string[];
}

/**
 * `events` random writes between `start` and an hour before `now`, plus writes at `extra`
 * instants (DST changes, local midnights), through the real write side, mirrored as facts.
 */
export async function simulate(
  engines: Engines,
  seed: number,
  window: { start: number; now: number; events?: number; extra?: number[] },
): Promise<History> {
  const random = prng(seed);
  let clock = window.start;
  const deps = {
    db: engines.postgres.db,
    now: () => new Date(clock),
    wakeProjector: () => {},
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
      project: t.project,
      assignee: t.assignee,
      status: t.status,
      previous: previous ?? '',
      due: t.due_on,
      createdAt: t.createdAt,
      startedAt: t.startedAt,
      blockedMs:
        kind === 'task_completed'
          ? t.blockedMs + (t.blockedSince === null ? 0 : clock - t.blockedSince)
          : null,
      dep,
    });
  const isOpen = (t: ModelTask | undefined) =>
    !!t && (t.status === 'open' || t.status === 'in_progress');
  /** After each write: which tasks turned blocked (open, an open dependency) or stopped. */
  const settle = () => {
    for (const t of tasks.values()) {
      const blocked =
        isOpen(t) &&
        [...edges].some((edge) => {
          const [gid, dep] = edge.split(' ') as [string, string];
          return gid === t.gid && isOpen(tasks.get(dep));
        });
      if (blocked && t.blockedSince === null) t.blockedSince = clock;
      if (!blocked && t.blockedSince !== null) {
        t.blockedMs += clock - t.blockedSince;
        t.blockedSince = null;
      }
    }
  };
  const span = window.now - 3_600_000 - window.start;
  const times = Array.from(
    { length: window.events ?? 160 },
    () => window.start + Math.floor(random.next() * span),
  );
  times.push(...(window.extra ?? []));
  for (const time of [...new Set(times)].sort((a, b) => a - b)) {
    // The last write's changes of blocked state, at its instant (nothing changes in between).
    settle();
    clock = time;
    const live = [...tasks.values()];
    const roll = random.next();
    if (live.length < 4 || roll < 0.35) {
      const status = random.next() < 0.8 ? 'open' : random.pick(TASK_STATUSES);
      const due =
        random.next() < 0.6
          ? new Date(window.start + Math.floor(random.next() * span * 1.1))
              .toISOString()
              .slice(0, 10)
          : null;
      const row = await inTaskUnit(deps, (trx) =>
        createTask(
          trx,
          {
            business: random.pick(businesses),
            name: 'task',
            project: random.pick(PROJECTS),
            assignee: random.pick(PEOPLE),
            status,
            due_on: due,
          },
          deps.now(),
        ),
      );
      const t: ModelTask = {
        gid: row.gid,
        business: row.business,
        project: row.project,
        assignee: row.assignee,
        status,
        due_on: due,
        createdAt: clock,
        startedAt: status === 'in_progress' ? clock : null,
        blockedMs: 0,
        blockedSince: null,
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
        t.status = input.status = random.pick(TASK_STATUSES.filter((s) => s !== t.status));
      if (member === 'project')
        t.project = input.project = random.pick(PROJECTS.filter((p) => p !== t.project));
      if (member === 'assignee')
        t.assignee = input.assignee = random.pick(PEOPLE.filter((p) => p !== t.assignee));
      if (member === 'due_on')
        t.due_on = input.due_on = t.due_on === '2026-10-30' ? '2026-11-05' : '2026-10-30';
      if (t.status === 'in_progress' && t.startedAt === null) t.startedAt = clock;
      await inTaskUnit(deps, (trx) => updateTask(trx, t.gid, input, MASTER, deps.now()));
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
      await inTaskUnit(deps, (trx) => addDependencies(trx, t.gid, [dep.gid], MASTER, deps.now()));
      edges.add(`${t.gid} ${dep.gid}`);
      emit('dependency_added', t, null, dep.gid);
    } else if (roll < 0.95 && edges.size > 0) {
      const edge = random.pick([...edges]);
      const [gid, dep] = edge.split(' ') as [string, string];
      await inTaskUnit(deps, (trx) => removeDependency(trx, gid, dep, MASTER, deps.now()));
      edges.delete(edge);
      emit('dependency_removed', tasks.get(gid) as ModelTask, null, dep);
    } else {
      const t = random.pick(live);
      await inTaskUnit(deps, (trx) => deleteTask(trx, t.gid, MASTER, deps.now()));
      for (const edge of [...edges].filter((e) => e.split(' ').includes(t.gid))) {
        const [gid, dep] = edge.split(' ') as [string, string];
        edges.delete(edge);
        emit('dependency_removed', tasks.get(gid) as ModelTask, null, dep);
      }
      emit('task_deleted', t, t.status);
      tasks.delete(t.gid);
    }
  }
  settle();
  return { facts, businesses };
}

/** The first instant of a local date, found by stepping through quarter hours with Intl. */
export function localMidnight(date: string, tz: string): number {
  let t = Date.parse(`${date}T00:00:00Z`) - 15 * 3_600_000;
  while (localDate(t, tz) < date) t += 15 * MINUTE;
  // Back to the exact first millisecond of the date (zones change on whole minutes).
  while (localDate(t - MINUTE, tz) === date) t -= MINUTE;
  return t;
}

/**
 * Rows of the current period with `comparison` and `change`: the other period's row with the
 * same labels, its time bucket matched by position; empty values where it has none.
 */
export function withComparison(
  rows: Row[],
  others: Row[],
  dims: DimensionName[],
  metrics: MetricName[],
  buckets: { current: ModelBucket[]; other: ModelBucket[] },
): Row[] {
  const position = (list: ModelBucket[], key: unknown) => list.findIndex((b) => b.key === key);
  const keyOf = (row: Row, list: ModelBucket[]) =>
    JSON.stringify(dims.map((d) => (isTime(d) ? position(list, row[d]) : row[d])));
  const byKey = new Map(others.map((row) => [keyOf(row, buckets.other), row]));
  return rows.map((row) => {
    const other = byKey.get(keyOf(row, buckets.current));
    const comparison = Object.fromEntries(
      metrics.map((m) => [m, other ? other[m] : METRICS[m].type === 'integer' ? 0 : null]),
    );
    const change = Object.fromEntries(
      metrics.map((m) => {
        const [now, then] = [row[m], comparison[m]];
        return [
          m,
          typeof now === 'number' && typeof then === 'number' && then !== 0
            ? (now - then) / then
            : null,
        ];
      }),
    );
    return { ...row, comparison, change };
  });
}
