// Oracle for `week_start`, the periods last_quarter, last_year and last_12_months, and
// `fill: "zero"`: answers on every exact source (facts and rollups) against the independent
// computation of analytics-model.ts, across both DST changes of America/New_York.
import { describe, expect, it } from 'vitest';
import { emptyValue, METRICS, type MetricName } from '../../libs/analytics/catalog/catalog.ts';
import type { QueryRequest } from '../../libs/analytics/parse/query-parser.ts';
import { type PeriodName, resolvePeriod } from '../../libs/analytics/period/period.ts';
import { prepareQuery, runQuery } from '../../libs/analytics/query.service.ts';
import { exportQuery } from '../../libs/analytics/query-export.ts';
import { ValidationError } from '../../libs/http/errors.ts';
import { analyticsDeps } from '../support/analytics.ts';
import {
  expected,
  expectRows,
  localMidnight,
  type ModelPeriod,
  modelBuckets,
  type Row,
} from '../support/analytics-model.ts';
import { useSimulatedHistory } from '../support/simulated-history.ts';

const NY = 'America/New_York';
// A Thursday; the week before it starts on Sunday 1 November, the night the clocks go back.
const NOW = new Date('2026-11-12T15:00:00Z');
const START = Date.parse('2026-02-15T00:00:00Z');
// Facts on both sides of each DST change and of Saturday/Sunday midnights in New York.
const EXTRA = [
  '2026-03-08T04:30:00Z', // Saturday 7 March 23:30 EST
  '2026-03-08T05:30:00Z', // Sunday 8 March 00:30 EST
  '2026-03-08T07:30:00Z', // Sunday 8 March 03:30 EDT, just after the jump
  '2026-03-15T03:30:00Z', // Saturday 14 March 23:30 EDT
  '2026-03-15T04:30:00Z', // Sunday 15 March 00:30 EDT
  '2026-11-01T03:30:00Z', // Saturday 31 October 23:30 EDT
  '2026-11-01T04:30:00Z', // Sunday 1 November 00:30 EDT
  '2026-11-01T06:30:00Z', // Sunday 1 November 01:30 EST, the second 01:30
  '2026-11-08T04:30:00Z', // Saturday 7 November 23:30 EST
  '2026-11-08T05:30:00Z', // Sunday 8 November 00:30 EST
].map(Date.parse);

const FLOW: MetricName[] = ['tasks_created', 'tasks_completed', 'completion_rate'];
const MIXED: MetricName[] = ['tasks_created', 'avg_cycle_time_hours', 'open_tasks'];
const signal = () => new AbortController().signal;
const meta = (answer: { metadata: Record<string, unknown> }) =>
  answer.metadata as Record<string, any>;

describe('week_start, the new periods and fill: "zero", against the model', () => {
  const history = useSimulatedHistory(23, { start: START, now: NOW, events: 220, extra: EXTRA });
  const answered = new Set<string>();

  /** Every exact source's answer to `request`, each checked by `check`. */
  async function onEverySource(
    request: QueryRequest,
    check: (answer: Awaited<ReturnType<typeof runQuery>>, context: string) => void,
  ): Promise<string[]> {
    const { sources } = await prepareQuery(history.deps, request, history.businesses, NOW);
    for (const source of sources) {
      const answer = await runQuery(history.deps, request, {
        signal: signal(),
        businesses: history.businesses,
        source,
        useCache: false,
      });
      answered.add(source);
      check(answer, `${source} ${JSON.stringify(request)}`);
    }
    return sources;
  }

  const modelPeriod = (answer: { metadata: Record<string, any> }, week: 'monday' | 'sunday') => {
    const period = meta(answer).query.period;
    return {
      from: Date.parse(period.from),
      to: Date.parse(period.to),
      tz: period.timezone,
      week,
    } satisfies ModelPeriod;
  };

  describe('week_start: sunday', () => {
    // 22 Feb – 28 Mar takes in 8 March (clocks forward), 18 Oct – 14 Nov takes in 1 November
    // (clocks back); both changes fall on a Sunday, the first day of a Sunday week.
    const RANGES: Array<[string, string]> = [
      ['2026-02-22', '2026-03-28'],
      ['2026-10-18', '2026-11-14'],
    ];
    for (const range of RANGES) {
      for (const dimensions of [['week'], ['week', 'project']] as const) {
        it(`${range.join('..')} by ${dimensions.join(', ')} in New York: Sunday weeks on every source`, {
          timeout: 120_000,
        }, async () => {
          for (const metrics of [FLOW, MIXED]) {
            const request: QueryRequest = {
              metrics,
              dimensions: [...dimensions],
              date_range: range,
              timezone: NY,
              week_start: 'sunday',
            };
            await onEverySource(request, (answer, context) => {
              expect(meta(answer).query.week_start, context).toBe('sunday');
              const period = modelPeriod(answer, 'sunday');
              expect(period.from, context).toBe(localMidnight(range[0], NY));
              const wanted = expected(
                history.facts,
                metrics,
                [...dimensions],
                period,
                NOW.getTime(),
              );
              expectRows(answer.data as Row[], wanted, context);
              for (const row of answer.data) {
                // Every label is a Sunday, as a calendar (not the service) tells.
                expect(new Date(`${row.week}T00:00:00Z`).getUTCDay(), context).toBe(0);
              }
            });
          }
        });
      }
    }

    it('Monday weeks stay the default, and differ from Sunday ones', async () => {
      const base = {
        metrics: ['tasks_created'] as MetricName[],
        dimensions: ['week' as const],
        date_range: RANGES[1] as [string, string],
        timezone: NY,
      };
      const monday = await runQuery(history.deps, base, {
        signal: signal(),
        businesses: history.businesses,
      });
      expect(meta(monday).query.week_start).toBe('monday');
      expect(monday.data.map((row) => new Date(`${row.week}T00:00:00Z`).getUTCDay())).toEqual(
        monday.data.map(() => 1),
      );
      const period = modelPeriod(monday, 'monday');
      expectRows(
        monday.data as Row[],
        expected(history.facts, base.metrics, base.dimensions, period, NOW.getTime()),
        'monday',
      );
      const sunday = await runQuery(
        history.deps,
        { ...base, week_start: 'sunday' },
        { signal: signal(), businesses: history.businesses },
      );
      expect(sunday.data.map((row) => row.week)).not.toEqual(monday.data.map((row) => row.week));
    });

    it('rollups answer Sunday weeks as facts do (UTC, where the day rollups apply)', {
      timeout: 120_000,
    }, async () => {
      const request: QueryRequest = {
        metrics: ['tasks_created', 'tasks_completed', 'open_tasks'],
        dimensions: ['week', 'status'],
        date_range: ['2026-05-03', '2026-08-29'],
        timezone: 'UTC',
        week_start: 'sunday',
      };
      const answers = new Map<string, unknown>();
      const sources = await onEverySource(request, (answer, context) => {
        const period = modelPeriod(answer, 'sunday');
        expectRows(
          answer.data as Row[],
          expected(history.facts, request.metrics, ['week', 'status'], period, NOW.getTime()),
          context,
        );
        answers.set(context, answer.data);
      });
      expect(sources).toContain('facts');
      expect(sources.some((source) => source.endsWith('_day'))).toBe(true);
      const [first, ...rest] = [...answers.values()];
      for (const other of rest) expect(other).toEqual(first);
    });

    it('this_week and last_week start on Sunday, across the November change', async () => {
      for (const [name, from, to] of [
        ['this_week', '2026-11-08', '2026-11-15'],
        ['last_week', '2026-11-01', '2026-11-08'],
      ] as const) {
        const answer = await runQuery(
          history.deps,
          { metrics: ['tasks_created'], period: name, timezone: NY, week_start: 'sunday' },
          { signal: signal(), businesses: history.businesses },
        );
        expect(meta(answer).query.period, name).toMatchObject({
          name,
          from: new Date(localMidnight(from, NY)).toISOString(),
          to: new Date(localMidnight(to, NY)).toISOString(),
        });
        const period = modelPeriod(answer, 'sunday');
        expectRows(
          answer.data as Row[],
          expected(history.facts, ['tasks_created'], [], period, NOW.getTime()),
          name,
        );
      }
      // Last week lasted 169 hours: it holds the hour the clocks went back.
      const last = resolvePeriod('last_week', NOW, NY, 'sunday');
      expect(last.to.getTime() - last.from.getTime()).toBe(169 * 3_600_000);
      // In March the week of the change has 167 hours.
      const march = resolvePeriod('this_week', new Date('2026-03-10T12:00:00Z'), NY, 'sunday');
      expect(march.from.toISOString()).toBe(
        new Date(localMidnight('2026-03-08', NY)).toISOString(),
      );
      expect(march.to.getTime() - march.from.getTime()).toBe(167 * 3_600_000);
    });
  });

  describe('last_quarter, last_year, last_12_months', () => {
    const CASES: Array<[PeriodName, string, string]> = [
      ['last_quarter', '2026-07-01', '2026-10-01'],
      ['last_year', '2025-01-01', '2026-01-01'],
      ['last_12_months', '2025-11-01', '2026-11-01'],
    ];
    for (const [name, from, to] of CASES) {
      it(`${name} at ${NOW.toISOString()} in New York is ${from} to ${to}, by month on every source`, {
        timeout: 120_000,
      }, async () => {
        const request: QueryRequest = {
          metrics: ['tasks_created', 'open_tasks'],
          dimensions: ['month'],
          period: name,
          timezone: NY,
        };
        await onEverySource(request, (answer, context) => {
          expect(meta(answer).query.period, context).toEqual({
            name,
            from: new Date(localMidnight(from, NY)).toISOString(),
            to: new Date(localMidnight(to, NY)).toISOString(),
            timezone: NY,
          });
          const period = modelPeriod(answer, 'monday');
          expectRows(
            answer.data as Row[],
            expected(history.facts, request.metrics, ['month'], period, NOW.getTime()),
            context,
          );
        });
      });
    }

    it('step back by whole quarters and years when compared', async () => {
      for (const [name, from] of [
        ['last_quarter', '2026-04-01'],
        ['last_year', '2024-01-01'],
        ['last_12_months', '2024-11-01'],
      ] as const) {
        const answer = await runQuery(
          history.deps,
          { metrics: ['tasks_created'], period: name, timezone: 'UTC', compare: 'previous_period' },
          { signal: signal(), businesses: history.businesses },
        );
        expect(meta(answer).comparison.period.from, name).toBe(`${from}T00:00:00.000Z`);
        expect(meta(answer).comparison.cut_at_elapsed, name).toBe(false);
      }
    });

    it('hold at the turn of a year: in January, last_quarter is last year’s fourth', () => {
      const january = new Date('2027-01-15T12:00:00Z');
      const quarter = resolvePeriod('last_quarter', january, 'UTC');
      expect([quarter.from.toISOString(), quarter.to.toISOString()]).toEqual([
        '2026-10-01T00:00:00.000Z',
        '2027-01-01T00:00:00.000Z',
      ]);
      const months = resolvePeriod('last_12_months', january, 'UTC');
      expect([months.from.toISOString(), months.to.toISOString()]).toEqual([
        '2026-01-01T00:00:00.000Z',
        '2027-01-01T00:00:00.000Z',
      ]);
    });
  });

  describe('fill: "zero"', () => {
    /** Counts and a rate by Sunday week and project, over a summer without a DST change. */
    const SUMMER_WEEKS: QueryRequest = {
      metrics: ['tasks_created', 'completion_rate'],
      dimensions: ['week', 'project'],
      date_range: ['2026-06-07', '2026-08-29'],
      timezone: NY,
      week_start: 'sunday',
    };

    /** The model's rows with every label combination given every bucket. */
    function filled(unfilled: Row[], metrics: MetricName[], period: ModelPeriod): Row[] {
      const buckets = modelBuckets('week', period, history.facts);
      const projects = [...new Set(unfilled.map((row) => row.project))];
      const byKey = new Map(unfilled.map((row) => [`${row.project}|${row.week}`, row]));
      return projects.flatMap((project) =>
        buckets.map(
          (bucket) =>
            byKey.get(`${project}|${bucket.key}`) ?? {
              project,
              week: bucket.key,
              ...Object.fromEntries(
                metrics.map((name) => [
                  name,
                  METRICS[name].source === 'state' && bucket.start >= NOW.getTime()
                    ? null
                    : emptyValue(name),
                ]),
              ),
            },
        ),
      );
    }

    /** The model's rows by Sunday week and project over the answer's period, and filled. */
    function byWeekAndProject(
      answer: { metadata: Record<string, unknown> },
      metrics: MetricName[],
    ) {
      const period = modelPeriod(answer, 'sunday');
      const unfilled = expected(history.facts, metrics, ['week', 'project'], period, NOW.getTime());
      return { unfilled, wanted: filled(unfilled, metrics, period) };
    }

    it('gives every project every week: counts 0, averages and rates null, on every source', {
      timeout: 180_000,
    }, async () => {
      // Runs past now: the last week has not begun for state metrics.
      const request: QueryRequest = {
        metrics: [...FLOW, 'avg_cycle_time_hours', 'open_tasks'],
        dimensions: ['week', 'project'],
        date_range: ['2026-09-06', '2026-11-21'],
        timezone: NY,
        week_start: 'sunday',
        fill: 'zero',
      };
      let gaps = 0;
      await onEverySource(request, (answer, context) => {
        expect(meta(answer).query.fill, context).toBe('zero');
        const { unfilled, wanted } = byWeekAndProject(answer, request.metrics);
        gaps = wanted.length - unfilled.length;
        expectRows(answer.data as Row[], wanted, context);
        expect(answer.metadata.total_rows, context).toBe(wanted.length);
      });
      // The data leave some project without a week another project has: something was filled.
      expect(gaps).toBeGreaterThan(0);
    });

    it('leaves the rows alone without fill, and pages and caps the filled rows', {
      timeout: 120_000,
    }, async () => {
      const base = SUMMER_WEEKS;
      const plain = await runQuery(history.deps, base, {
        signal: signal(),
        businesses: history.businesses,
      });
      const { unfilled, wanted } = byWeekAndProject(plain, base.metrics);
      expectRows(plain.data as Row[], unfilled, 'without fill');
      expect(meta(plain).query.fill).toBeNull();
      // One project lacks a week: the answer without fill leaves it out, with fill it reads 0.
      const gap = wanted.find((row) => !unfilled.includes(row));
      expect(gap).toBeDefined();
      expect(gap).toMatchObject({ tasks_created: 0, completion_rate: null });
      expect(plain.data).not.toContainEqual(
        expect.objectContaining({ project: gap?.project, week: gap?.week }),
      );

      const whole = await runQuery(
        history.deps,
        { ...base, fill: 'zero', order_by: [{ field: 'tasks_created', direction: 'desc' }] },
        { signal: signal(), businesses: history.businesses },
      );
      expectRows(whole.data as Row[], wanted, 'filled');
      expect(whole.metadata.total_rows).toBe(wanted.length);
      // Ordered over the filled rows: the zeros come after every week with a task.
      const counts = whole.data.map((row) => row.tasks_created as number);
      expect(counts).toEqual([...counts].sort((a, b) => b - a));

      const pages: Row[] = [];
      for (let offset = 0; offset < wanted.length; offset += 7) {
        const page = await runQuery(
          history.deps,
          {
            ...base,
            fill: 'zero',
            order_by: [{ field: 'tasks_created', direction: 'desc' }],
            limit: 7,
            offset,
          },
          { signal: signal(), businesses: history.businesses },
        );
        expect(page.metadata.total_rows).toBe(wanted.length);
        pages.push(...(page.data as Row[]));
      }
      expect(pages).toEqual(whole.data);

      const capped = analyticsDeps(history.engines, { now: () => NOW, maxRows: 5 });
      const cut = await runQuery(
        capped,
        { ...base, fill: 'zero' },
        { signal: signal(), businesses: history.businesses },
      );
      expect(cut.data).toHaveLength(5);
      expect(cut.metadata.total_rows).toBe(wanted.length);
      expect(cut.warnings).toContainEqual(
        expect.objectContaining({ code: 'result_truncated', total_rows: wanted.length }),
      );
    });

    it('exports the filled rows as the answer gives them', async () => {
      const request: QueryRequest = { ...SUMMER_WEEKS, fill: 'zero' };
      const context = { signal: signal(), businesses: history.businesses };
      const answer = await runQuery(history.deps, request, context);
      const exported = await exportQuery(history.deps, request, context, 'application/x-ndjson');
      let text = '';
      for await (const chunk of exported.stream) text += chunk;
      const rows = text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(rows).toEqual(answer.data);
      expect(rows.some((row) => row.tasks_created === 0 && row.completion_rate === null)).toBe(
        true,
      );
    });

    it('is refused without a time dimension, at fill', async () => {
      const refused = await runQuery(
        history.deps,
        { metrics: ['tasks_created'], dimensions: ['project'], fill: 'zero' },
        { signal: signal(), businesses: history.businesses },
      ).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ValidationError);
      expect((refused as ValidationError).issues).toEqual([
        expect.objectContaining({
          loc: ['body', 'fill'],
          type: 'value_error',
          msg: expect.stringMatching(/time dimension/),
        }),
      ]);
    });
  });

  it('answered from facts and from rollups', () => {
    expect(answered.has('facts')).toBe(true);
    expect([...answered].some((source) => source.startsWith('rollup_'))).toBe(true);
  });
});
