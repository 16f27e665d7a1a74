// Oracle: an answer without dimensions is one row, so `total_rows` is 1 on every source the
// planner answers from, whatever the statement does inside (blocked tasks join spans and edges),
// and the figures in that row equal the independent computation.
import { describe, expect, it } from 'vitest';
import { METRIC_NAMES, METRICS, type MetricName } from '../../libs/analytics/catalog/catalog.ts';
import { type PeriodName, resolvePeriod } from '../../libs/analytics/period/period.ts';
import { prepareQuery, runQuery } from '../../libs/analytics/query.service.ts';
import { ROLLUP_NAMES } from '../../libs/analytics/sources/rollups.ts';
import { expected, expectRows, type Row } from '../support/analytics-model.ts';
import { useSimulatedHistory } from '../support/simulated-history.ts';

const NOW = new Date('2026-11-02T12:00:00Z');
const START = Date.parse('2026-08-01T00:00:00Z');
// Tokyo's midnights are not UTC's: only facts and the 15-minute and month rollups answer there;
// in UTC the day rollups do too.
const ZONES = ['Asia/Tokyo', 'UTC'];
const METRIC_SETS: MetricName[][] = [
  ['blocked_tasks'],
  ['blocked_tasks', 'open_tasks', 'completion_rate'],
  ['open_tasks', 'overdue_tasks'],
  ['tasks_created', 'tasks_completed'],
  METRIC_NAMES.filter((m) => METRICS[m].source === 'flow'),
  METRIC_NAMES,
];
const PERIOD_NAMES: PeriodName[] = [
  'today',
  'last_7_days',
  'last_30_days',
  'this_month',
  'last_90_days',
  'this_year',
  'last_quarter',
  'all_time',
];

describe('analytics oracle: total_rows of every answer without dimensions, on every source', () => {
  const history = useSimulatedHistory(11, { start: START, now: NOW });
  const answered = new Set<string>();

  it('blocks tasks in its history, or a blocked count of 0 would prove little', () => {
    expect(history.facts.some((f) => f.kind === 'dependency_added')).toBe(true);
  });

  for (const period of PERIOD_NAMES) {
    it(`${period}: one row of the right figures, total_rows 1, no truncation`, {
      timeout: 120_000,
    }, async () => {
      for (const tz of ZONES) await checkPeriod(period, tz);
    });
  }

  async function checkPeriod(period: PeriodName, tz: string): Promise<void> {
    const resolved = resolvePeriod(period, NOW, tz);
    const bounds = {
      from: resolved.from.getTime(),
      to: resolved.to.getTime(),
      tz,
      allTime: period === 'all_time',
    };
    const { deps, facts, businesses } = history;
    for (const metrics of METRIC_SETS) {
      const request = { metrics, period, timezone: tz };
      const { sources } = await prepareQuery(deps, request, businesses, NOW);
      const wanted = expected(facts, metrics, [], bounds, NOW.getTime());
      for (const source of sources) {
        const context = `${source} ${metrics.join(',')} ${period} ${tz}`;
        const answer = await runQuery(deps, request, {
          signal: new AbortController().signal,
          businesses,
          source,
          useCache: false,
        });
        answered.add(source);
        expectRows(answer.data as Row[], wanted, context);
        expect(answer.metadata, context).toMatchObject({ row_count: 1, total_rows: 1 });
        expect(answer.warnings ?? [], context).not.toContainEqual(
          expect.objectContaining({ code: 'result_truncated' }),
        );
        // Paging past the one row: nothing left, and still one row in all.
        const past = await runQuery(
          deps,
          { ...request, offset: 1 },
          { signal: new AbortController().signal, businesses, source, useCache: false },
        );
        expect(past.data, context).toEqual([]);
        expect(past.metadata, context).toMatchObject({ row_count: 0, total_rows: 1 });
        expect(past.warnings ?? [], context).not.toContainEqual(
          expect.objectContaining({ code: 'result_truncated' }),
        );
      }
    }
  }

  it('answered from facts and from every rollup', () => {
    expect([...answered].sort()).toEqual(['facts', ...ROLLUP_NAMES].sort());
  });
});
