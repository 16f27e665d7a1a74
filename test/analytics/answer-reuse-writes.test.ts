// A kept answer reused in part is the answer: over random queries, pairs of clock readings and
// facts written between them (late ones dated days back, ones between the readings, ones dated
// ahead of the clock; for the businesses read, or for another), the refreshed answer equals the
// answer computed afresh, on every source that answers it. Only what new facts or the clock can
// have moved runs again: a series its buckets from the earliest new fact's on, and an answer for
// businesses without new facts nothing at all.
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DimensionName, MetricName } from '../../libs/analytics/catalog/catalog.ts';
import type { ResultCache } from '../../libs/analytics/execute/result-cache.ts';
import type { QueryRequest } from '../../libs/analytics/parse/query-parser.ts';
import { type AnalyticsDeps, prepareQuery } from '../../libs/analytics/query.service.ts';
import type { Principal } from '../../libs/auth/principal.ts';
import { type Engines, openEngines } from '../../libs/storage/engines.ts';
import { addDependencies } from '../../libs/tasks/dependency.service.ts';
import { createTask, updateTask } from '../../libs/tasks/task.service.ts';
import { inTaskUnit } from '../../libs/tasks/task-unit.ts';
import { projectAll } from '../support/analytics.ts';
import { simulate } from '../support/analytics-model.ts';
import { answered, clockedAnswers, queryRequests } from '../support/clocked-answers.ts';
import { type TestConfig, testConfig } from '../support/engines.ts';

const START = Date.parse('2026-10-01T00:00:00Z');
const END = Date.parse('2026-11-02T12:00:00Z');
const RUNS = Number(process.env.ANSWER_REUSE_WRITES_RUNS ?? 60);
const SEED = Number(process.env.ANSWER_REUSE_WRITES_SEED ?? 20261128);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const MASTER: Principal = { kind: 'master' };

const METRIC_CHOICES: MetricName[] = [
  'tasks_created',
  'tasks_completed',
  'open_tasks',
  'overdue_tasks',
  'blocked_tasks',
  'completion_rate',
  'p85_cycle_time_hours',
  'p90_cycle_time_hours',
  'p95_cycle_time_hours',
];
/** Mostly series, which reuse bucket by bucket; the others reuse only settled parts. */
const DIMENSION_CHOICES: DimensionName[][] = [
  ['day'],
  ['day'],
  ['week'],
  ['month'],
  [],
  ['project'],
  ['status', 'day'],
];
const PERIODS = [
  'today',
  'yesterday',
  'last_7_days',
  'last_30_days',
  'this_week',
  'last_week',
  'this_month',
  'all_time',
];
/** How far the second reading follows the first: a refresh, a minute, an hour, a day. */
const STEPS = [1, 5_000, 60_000, 900_000, HOUR, DAY];

const request = queryRequests({
  metrics: METRIC_CHOICES,
  dimensions: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...DIMENSION_CHOICES) },
    { weight: 1, arbitrary: fc.constant(['hour'] as DimensionName[]) },
  ),
  periods: PERIODS,
  compares: [null, null, 'previous_period', 'previous_year'],
});

/**
 * One write between the readings: a task created (and maybe completed, maybe made to depend on
 * the previous write's task), dated `late` (anywhere back to the start of the facts), `between`
 * the readings, or `ahead` of the second (a writer whose clock runs fast); for a business the
 * query reads, or for one it does not.
 */
const write = fc.record({
  scoped: fc.boolean(),
  when: fc.constantFrom('late', 'late', 'between', 'ahead'),
  share: fc.double({ min: 0, max: 1, noNaN: true }),
  status: fc.constantFrom('open', 'open', 'in_progress', 'completed'),
  completeAfter: fc.option(fc.integer({ min: 1, max: 6 * HOUR }), { nil: null }),
  depends: fc.boolean(),
  project: fc.constantFrom('alpha', 'beta', null),
  due: fc.option(fc.constantFrom('2026-10-15', '2026-10-30', '2026-11-03'), { nil: null }),
});

describe('answer reuse with writes: what is kept across new facts equals the fresh answer', () => {
  let setup: TestConfig;
  let engines: Engines;
  let businesses: string[];
  let deps: AnalyticsDeps;
  let cache: ResultCache;
  let ask: Awaited<ReturnType<typeof clockedAnswers>>['ask'];
  const statements: number[] = [];
  const counted = { hit: 0, miss: 0, partial: 0 };

  beforeAll(async () => {
    setup = await testConfig();
    engines = await openEngines(setup.config);
    const history = await simulate(engines, 17, { start: START, now: END, events: 200 });
    businesses = history.businesses;
    await projectAll(engines);
    ({ deps, cache, ask } = await clockedAnswers(setup, engines, () => businesses, {
      start: END,
      counters: {
        hit: () => counted.hit++,
        miss: () => counted.miss++,
        partial: () => counted.partial++,
      },
      engineRead: (rowsRead) => statements.push(rowsRead),
    }));
  }, 300_000);
  afterAll(async () => {
    await cache?.close();
    await engines?.close();
    await setup?.cleanup();
  });

  const taskDeps = (at: number) => ({
    db: engines.postgres.db,
    now: () => new Date(at),
    wakeProjector: () => {},
  });

  /** Writes through the write side with the clock at `at`, so the facts are dated then. */
  const writeAt = <T>(at: number, work: Parameters<typeof inTaskUnit<T>>[1]) =>
    inTaskUnit(taskDeps(at), work);

  type Write = typeof write extends fc.Arbitrary<infer W> ? W : never;

  /** The writes, dated as drawn, then projected: late ones after newer facts already were. */
  async function writeAll(writes: Write[], first: number, second: number): Promise<void> {
    let previous: { gid: string; business: string; at: number } | undefined;
    for (const [i, w] of writes.entries()) {
      const at =
        w.when === 'late'
          ? START + Math.floor(w.share * (first - START))
          : w.when === 'between'
            ? first + Math.floor(w.share * (second - first))
            : second + 1 + Math.floor(w.share * 2 * HOUR);
      const business = w.scoped
        ? (businesses[i % businesses.length] as string)
        : `${businesses[0]}_elsewhere`;
      const task = await writeAt(at, (trx) =>
        createTask(
          trx,
          { business, name: 'late', project: w.project, status: w.status, due_on: w.due },
          new Date(at),
        ),
      );
      if (w.completeAfter !== null && w.status !== 'completed') {
        const done = at + w.completeAfter;
        await writeAt(done, (trx) =>
          updateTask(trx, task.gid, { status: 'completed' }, MASTER, new Date(done)),
        );
      }
      if (w.depends && previous && previous.business === business) {
        const later = Math.max(at, previous.at) + 1_000;
        const dependency = previous.gid;
        await writeAt(later, (trx) =>
          addDependencies(trx, task.gid, [dependency], MASTER, new Date(later)),
        );
      }
      previous = { gid: task.gid, business, at };
    }
    await projectAll(engines);
  }

  it('equals the fresh answer after late, recent and future facts, on every source', async () => {
    const before = { ...counted };
    await fc.assert(
      fc.asyncProperty(
        request,
        fc.integer({ min: END - 2 * DAY, max: END + DAY }),
        fc.constantFrom(...STEPS),
        fc.array(write, { minLength: 0, maxLength: 4 }),
        async (query, first, step, writes) => {
          const second = first + step;
          const at = async (reading: number) =>
            (await prepareQuery(deps, query, businesses, new Date(reading))).sources;
          const [early, late] = [await at(first), await at(second)];
          const sources = early.filter((source) => late.includes(source));
          for (const source of sources) await ask(query, first, { source });
          await writeAll(writes, first, second);
          for (const source of sources) {
            const again = await ask(query, second, { source });
            const fresh = await ask(query, second, { source, fresh: true });
            const context = `${source} ${JSON.stringify(query)} ${first}+${step} ${JSON.stringify(writes)}`;
            expect(answered(again), context).toEqual(answered(fresh));
          }
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
    // Not vacuous: answers were kept whole across other businesses' writes, and in part
    // across the queries' own.
    expect(counted.hit - before.hit).toBeGreaterThan(0);
    expect(counted.partial - before.partial).toBeGreaterThan(0);
  }, 900_000);

  const series = {
    metrics: ['tasks_created', 'open_tasks'],
    dimensions: ['day'],
    period: 'last_30_days',
    timezone: 'Europe/Paris',
  } as QueryRequest;

  it('recomputes a series only from the day a late fact is dated', async () => {
    const now = END + 10 * DAY + 5 * HOUR;
    await ask(series, now);
    // Tasks created ten days back and a minute ago, projected together now.
    for (const at of [now - 10 * DAY, now - 60_000]) {
      await writeAt(at, (trx) =>
        createTask(trx, { business: businesses[0] as string, name: 'late' }, new Date(at)),
      );
    }
    await projectAll(engines);
    const ran = statements.length;
    const partial = counted.partial;
    const again = await ask(series, now + 5_000);
    const tail = statements.slice(ran);
    // One statement, the buckets from that day on, and its own-reads companion: where the next
    // fact lies is known already.
    expect(tail).toHaveLength(2);
    expect(counted.partial - partial).toBe(1);
    expect(again.metadata.cache).toBe('miss');
    const before = statements.length;
    expect(answered(again)).toEqual(answered(await ask(series, now + 5_000, { fresh: true })));
    const sum = (reads: number[]) => reads.reduce((a, b) => a + b, 0);
    expect(sum(tail)).toBeLessThan(sum(statements.slice(before)));
  });

  it('keeps the whole answer when only another business had new facts', async () => {
    const now = END + 12 * DAY;
    const first = await ask(series, now);
    const elsewhere = `${businesses[0]}_elsewhere`;
    await writeAt(now - 3 * DAY, (trx) =>
      createTask(trx, { business: elsewhere, name: 'elsewhere' }, new Date(now - 3 * DAY)),
    );
    await projectAll(engines);
    const ran = statements.length;
    const again = await ask(series, now + 5_000);
    expect(again.metadata.cache).toBe('hit');
    expect(statements.length - ran).toBe(0);
    expect(again.data).toEqual(first.data);
  });

  it('recomputes a compared series where a late fact lands in the other period', async () => {
    const compared = {
      metrics: ['tasks_created', 'open_tasks'],
      dimensions: ['day'],
      period: 'this_week',
      compare: 'previous_period',
      timezone: 'America/New_York',
    } as QueryRequest;
    const now = END + 16 * DAY + 3 * HOUR;
    await ask(compared, now);
    // Dated on the other week's first day, long before the cut: only the comparison moves.
    const late = now - 9 * DAY;
    await writeAt(late, (trx) =>
      createTask(trx, { business: businesses[1] as string, name: 'compared' }, new Date(late)),
    );
    await projectAll(engines);
    const again = await ask(compared, now + 60_000);
    expect(answered(again)).toEqual(answered(await ask(compared, now + 60_000, { fresh: true })));
  });

  it('trusts nothing kept once facts were projected without a logged change', async () => {
    const now = END + 14 * DAY;
    await ask(series, now);
    const late = now - 5 * DAY;
    const seq = await sql<{ seq: string }>`select max(seq)::text as seq from projection_changes`
      .execute(engines.postgres.db)
      .then((result) => result.rows[0]?.seq ?? '0');
    await writeAt(late, (trx) =>
      createTask(trx, { business: businesses[0] as string, name: 'unlogged' }, new Date(late)),
    );
    await projectAll(engines);
    // As a projector of an earlier version would have left it: the cursor moved, nothing logged.
    await sql`delete from projection_changes where seq > ${seq}::bigint`.execute(
      engines.postgres.db,
    );
    const partial = counted.partial;
    const again = await ask(series, now + 5_000);
    expect(again.metadata.cache).toBe('miss');
    expect(counted.partial).toBe(partial);
    expect(answered(again)).toEqual(answered(await ask(series, now + 5_000, { fresh: true })));
  });
});
