// A reused answer is the answer: over random queries and pairs of clock readings (between facts,
// after them, across midnights, bucket starts and comparison cuts), a query asked again with no
// newly projected fact is a hit whenever nothing it depends on moved, and every hit equals the
// answer computed afresh at the later reading, on every source that answers it. Identical
// queries in flight together run once.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DimensionName, MetricName } from '../../libs/analytics/catalog/catalog.ts';
import { AnswerReuse } from '../../libs/analytics/execute/answer-reuse.ts';
import { ResultCache } from '../../libs/analytics/execute/result-cache.ts';
import type { QueryRequest } from '../../libs/analytics/parse/query-parser.ts';
import {
  type AnalyticsDeps,
  prepareQuery,
  type runQuery,
} from '../../libs/analytics/query.service.ts';
import { type Engines, openEngines } from '../../libs/storage/engines.ts';
import { MemoryResultStore } from '../../libs/storage/result-store.ts';
import { projectAll } from '../support/analytics.ts';
import { simulate } from '../support/analytics-model.ts';
import { answered, clockedAnswers, queryRequests } from '../support/clocked-answers.ts';
import { type TestConfig, testConfig } from '../support/engines.ts';

const START = Date.parse('2026-10-20T00:00:00Z');
const END = Date.parse('2026-11-02T12:00:00Z');
const RUNS = Number(process.env.ANSWER_REUSE_RUNS ?? 80);
const SEED = Number(process.env.ANSWER_REUSE_SEED ?? 20261127);

const METRIC_CHOICES: MetricName[] = [
  'tasks_created',
  'tasks_completed',
  'open_tasks',
  'overdue_tasks',
  'blocked_tasks',
  'completion_rate',
];
const DIMENSION_CHOICES: DimensionName[][] = [
  [],
  ['day'],
  ['project'],
  ['assignee', 'week'],
  ['status', 'day'],
];
const PERIODS = ['today', 'yesterday', 'last_7_days', 'this_week', 'this_month', 'all_time'];
/** How far the second reading follows the first: a refresh, a minute, an hour, a day. */
const STEPS = [1, 1_000, 5_000, 60_000, 900_000, 3_600_000, 86_400_000];

const request = queryRequests({
  metrics: METRIC_CHOICES,
  dimensions: fc.oneof(
    fc.constantFrom(...DIMENSION_CHOICES),
    fc.constant(['hour'] as DimensionName[]),
  ),
  periods: PERIODS,
  compares: [null, 'previous_period', 'previous_year'],
});

const figures = (answer: Awaited<ReturnType<typeof runQuery>>) => ({
  data: answer.data,
  totals: answer.metadata.totals,
  totals_comparison: answer.metadata.totals_comparison,
});

describe('answer reuse: hits equal the answer computed afresh; identical queries run once', () => {
  let setup: TestConfig;
  let engines: Engines;
  let businesses: string[];
  /** When each fact happened: readings just before one are where reuse can go wrong. */
  let instants: number[] = [];
  let created: number[] = [];
  let deps: AnalyticsDeps;
  let cache: ResultCache;
  let ask: Awaited<ReturnType<typeof clockedAnswers>>['ask'];
  const statements: number[] = [];

  beforeAll(async () => {
    setup = await testConfig();
    engines = await openEngines(setup.config);
    const history = await simulate(engines, 11, { start: START, now: END, events: 220 });
    businesses = history.businesses;
    instants = history.facts.map((fact) => fact.at).sort((a, b) => a - b);
    created = history.facts.filter((f) => f.kind === 'task_created').map((f) => f.at);
    await projectAll(engines);
    ({ deps, cache, ask } = await clockedAnswers(setup, engines, () => businesses, {
      start: END,
      engineRead: () => statements.push(1),
    }));
  }, 300_000);
  afterAll(async () => {
    await cache?.close();
    await engines?.close();
    await setup?.cleanup();
  });

  it('answers a repeat from the store only while it holds, and then exactly', async () => {
    const seen = { hit: 0, miss: 0 };
    await fc.assert(
      fc.asyncProperty(
        request,
        fc.oneof(
          // Anywhere from four days before the last fact to two days after it, a step later;
          fc.record({
            first: fc.integer({ min: END - 4 * 86_400_000, max: END + 2 * 86_400_000 }),
            step: fc.constantFrom(...STEPS),
          }),
          // or the two readings on either side of a fact (state read at now moves past it),
          // or of where a comparison's cut reaches a fact of the day or week before.
          fc
            .record({
              i: fc.nat(),
              before: fc.integer({ min: 1, max: 60_000 }),
              after: fc.integer({ min: 1, max: 60_000 }),
              back: fc.constantFrom(0, 86_400_000, 7 * 86_400_000),
            })
            .map(({ i, before, after, back }) => ({
              first: (instants[i % instants.length] as number) + back - before,
              step: before + after,
            })),
        ),
        async (query, { first, step }) => {
          const { sources } = await prepareQuery(deps, query, businesses, new Date(first));
          for (const source of sources) {
            await ask(query, first, { source });
            const again = await ask(query, first + step, { source });
            const fresh = await ask(query, first + step, { source, fresh: true });
            expect(fresh.metadata.cache).toBe('miss');
            expect(answered(again), `${source} ${JSON.stringify(query)} ${first}+${step}`).toEqual(
              answered(fresh),
            );
            seen[again.metadata.cache === 'hit' ? 'hit' : 'miss'] += 1;
          }
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
    // Neither vacuous nor a cache that never serves: both happen, and a refresh a few seconds
    // later mostly hits (misses come from steps across a boundary or a fact).
    expect(seen.hit).toBeGreaterThan(seen.miss / 2);
    expect(seen.miss).toBeGreaterThan(0);
  }, 600_000);

  it('hits every period, comparison and totals when refreshed after the last fact', async () => {
    const after = END + 3_600_000;
    for (const period of PERIODS) {
      const query = {
        metrics: ['tasks_created', 'open_tasks', 'overdue_tasks'],
        dimensions: ['assignee'],
        period,
        include: ['totals'],
        ...(period === 'all_time' ? {} : { compare: 'previous_period' }),
      } as QueryRequest;
      const first = await ask(query, after);
      const before = statements.length;
      const refreshes = [1_000, 5_000, 30_000].map((step) => ask(query, after + step));
      for (const refresh of await Promise.all(refreshes)) {
        expect(refresh.metadata.cache, period).toBe('hit');
        // The figures are the same; a comparison's cut, stated in metadata, moves with the clock.
        expect(figures(refresh)).toEqual(figures(first));
      }
      expect(statements.length, `${period}: the engine ran nothing for the refreshes`).toBe(before);
    }
  });

  it('runs identical queries in flight together once, and each gets the answer', async () => {
    const query = {
      metrics: ['tasks_created', 'p90_cycle_time_hours'],
      dimensions: ['project', 'day'],
      period: 'last_7_days',
    } as QueryRequest;
    // What one uncached run of this query costs the engine: the same query on another day runs
    // the same statements. Days no other test reads, so no statement of them is kept yet.
    const alone = statements.length;
    await ask(query, END + 30 * 86_400_000);
    const one = statements.length - alone;
    // A clock reading no answer has been kept for: the first one runs, the others join it.
    const at = END + 40 * 86_400_000;
    const before = statements.length;
    const answers = await Promise.all(Array.from({ length: 8 }, () => ask(query, at)));
    expect(statements.length - before).toBe(one);
    // One ran; the others joined it, or, arriving after it ended, found what it kept.
    const reuses = answers.map((a) => a.metadata.cache);
    expect(reuses.filter((reuse) => reuse === 'miss')).toHaveLength(1);
    expect(
      reuses.filter((reuse) => reuse !== 'miss').every((r) => r === 'coalesced' || r === 'hit'),
    ).toBe(true);
    for (const answer of answers) expect(answered(answer)).toEqual(answered(answers[0]!));
  });

  it('ends an answer where the clock passes a fact: state at now, and a comparison cut', async () => {
    // A task created at f: open_tasks at now counts it once now passes f.
    const f = created.find((at) => at > END - 3 * 86_400_000) as number;
    const open = { metrics: ['open_tasks'], period: 'all_time' } as QueryRequest;
    await ask(open, f - 500);
    const past = await ask(open, f + 500);
    expect(past.metadata.cache).toBe('miss');
    expect(past.data).toEqual((await ask(open, f + 500, { fresh: true })).data);
    // Today against yesterday cut at the elapsed part: a day after f, the cut passes f.
    const compared = {
      metrics: ['tasks_created'],
      period: 'today',
      compare: 'previous_period',
      include: ['totals'],
    } as QueryRequest;
    const early = await ask(compared, f + 86_400_000 - 500);
    const later = await ask(compared, f + 86_400_000 + 500);
    expect(later.metadata.cache).toBe('miss');
    expect(later.metadata.totals_comparison).not.toEqual(early.metadata.totals_comparison);
    expect(figures(later)).toEqual(
      figures(await ask(compared, f + 86_400_000 + 500, { fresh: true })),
    );
  });

  it('does not share an answer across a boundary the later caller has crossed', async () => {
    const query = {
      metrics: ['tasks_created'],
      dimensions: ['day'],
      period: 'today',
    } as QueryRequest;
    const midnight = Date.parse('2026-11-04T00:00:00Z');
    const before = await ask(query, midnight - 1_000);
    const after = await ask(query, midnight + 1_000);
    expect(after.metadata.cache).toBe('miss');
    expect(after.metadata.query).not.toEqual(before.metadata.query);
  });
});

/** A promise held until `finish` is called: a computation kept running while callers arrive. */
function gate(): { held: Promise<void>; finish: () => void } {
  let finish!: () => void;
  const held = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return { held, finish };
}

describe('answer sharing between callers', () => {
  const READING = { watermark: 'w', changes: null };
  const lasting = (parts: unknown, validUntil = 2_000) => ({
    parts,
    computedAt: 1_000,
    validUntil,
    store: true,
    kept: 'none' as const,
  });

  it('runs one computation for callers arriving while it runs; each gets its answer', async () => {
    const reuse = new AnswerReuse(new ResultCache(new MemoryResultStore(1 << 20)));
    let runs = 0;
    const { held, finish } = gate();
    const compute = async () => {
      runs += 1;
      await held;
      return lasting({ n: 42 });
    };
    const callers = Array.from({ length: 8 }, (_, i) =>
      reuse.answer('k', READING, 1_000 + i, compute),
    );
    finish();
    const answers = await Promise.all(callers);
    expect(runs).toBe(1);
    expect(answers.map((a) => a.reuse)).toEqual(['miss', ...Array(7).fill('coalesced')]);
    expect(answers.every((a) => (a.parts as { n: number }).n === 42)).toBe(true);
    // Kept: a caller after it ended finds it while it holds, and computes once it no longer does.
    expect((await reuse.answer('k', READING, 1_500, compute)).reuse).toBe('hit');
    expect((await reuse.answer('k', READING, 2_000, compute)).reuse).toBe('miss');
    expect(runs).toBe(2);
  });

  it('keeps a value while the caller says it holds, computed once for callers arriving meanwhile', async () => {
    const store = new MemoryResultStore(1 << 20);
    const reuse = new AnswerReuse(new ResultCache(store));
    let runs = 0;
    const { held, finish } = gate();
    const compute = async () => {
      runs += 1;
      await held;
      return { run: runs, keepable: runs !== 2 };
    };
    let holding = true;
    const options = {
      holds: () => holding,
      keep: (value: { keepable: boolean }) => value.keepable,
      fresh: false,
      tags: ['acme'],
    };
    const callers = Array.from({ length: 5 }, () => reuse.keptWhile('v', compute, options));
    finish();
    const answers = await Promise.all(callers);
    expect(runs).toBe(1);
    expect(answers.map((a) => a.kept)).toEqual([false, true, true, true, true]);
    expect(answers.every((a) => a.value.run === 1)).toBe(true);
    expect(await reuse.keptWhile('v', compute, options)).toEqual({
      value: { run: 1, keepable: true },
      kept: true,
    });
    // Fresh: computed again; not kept when `keep` refuses it, so the kept one stays.
    expect((await reuse.keptWhile('v', compute, { ...options, fresh: true })).value.run).toBe(2);
    expect((await reuse.keptWhile('v', compute, options)).value.run).toBe(1);
    // No longer holding: computed again, and filed under its business.
    holding = false;
    expect(await reuse.keptWhile('v', compute, options)).toMatchObject({ kept: false });
    expect(runs).toBe(3);
    expect(await store.forget('acme')).toBe(1);
  });

  it('does not hand a waiting caller an answer that no longer holds at its reading', async () => {
    const reuse = new AnswerReuse(null);
    let runs = 0;
    const compute = async () => {
      runs += 1;
      await new Promise((resolve) => setTimeout(resolve, 10));
      return lasting({ run: runs }, 1_100);
    };
    const [early, late] = await Promise.all([
      reuse.answer('k', READING, 1_000, compute),
      reuse.answer('k', READING, 1_100, compute),
    ]);
    expect(early.reuse).toBe('miss');
    expect(late.reuse).toBe('miss');
    expect(runs).toBe(2);
  });

  it('lets waiting callers run it themselves when the first one fails', async () => {
    const reuse = new AnswerReuse(null);
    let runs = 0;
    const compute = async () => {
      runs += 1;
      if (runs === 1) throw new Error('the first caller went away');
      return lasting({ ok: true });
    };
    const [first, second] = await Promise.allSettled([
      reuse.answer('k', READING, 1_000, compute),
      reuse.answer('k', READING, 1_000, compute),
    ]);
    expect(first.status).toBe('rejected');
    expect(second).toMatchObject({ status: 'fulfilled', value: { reuse: 'miss' } });
  });

  it('ends a waiting caller’s wait when its own client leaves; the first caller goes on', async () => {
    const reuse = new AnswerReuse(null);
    const { held, finish } = gate();
    const compute = async () => {
      await held;
      return lasting({ ok: true });
    };
    const first = reuse.answer('k', READING, 1_000, compute);
    const leaving = new AbortController();
    const waiter = reuse.answer('k', READING, 1_000, compute, { signal: leaving.signal });
    leaving.abort();
    await expect(waiter).rejects.toMatchObject({ code: 'unavailable' });
    finish();
    expect((await first).reuse).toBe('miss');
  });

  it('neither joins nor looks up for a caller asking for a fresh answer', async () => {
    const reuse = new AnswerReuse(new ResultCache(new MemoryResultStore(1 << 20)));
    let runs = 0;
    const compute = async () => {
      runs += 1;
      return lasting({ runs });
    };
    await reuse.answer('k', READING, 1_000, compute);
    expect((await reuse.answer('k', READING, 1_000, compute, { fresh: true })).reuse).toBe('miss');
    expect(runs).toBe(2);
  });
});
