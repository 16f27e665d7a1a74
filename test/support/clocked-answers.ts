import fc from 'fast-check';
import type { DimensionName, MetricName } from '../../libs/analytics/catalog/catalog.ts';
import { QueryExecutor } from '../../libs/analytics/execute/query-execution.ts';
import {
  ResultCache,
  type ResultCacheObserver,
} from '../../libs/analytics/execute/result-cache.ts';
import type { QueryRequest } from '../../libs/analytics/parse/query-parser.ts';
import { type AnalyticsDeps, runQuery } from '../../libs/analytics/query.service.ts';
import type { Engines } from '../../libs/storage/engines.ts';
import { openResultStore } from '../../libs/storage/result-stores.ts';
import { analyticsDeps } from './analytics.ts';
import type { TestConfig } from './engines.ts';

export type Answer = Awaited<ReturnType<typeof runQuery>>;

/**
 * The read side over a test's engines with a clock the test sets and the result cache the
 * configuration picks (Redis on servers, memory when embedded), for tests of what a repeat
 * may reuse. `ask` reads at an instant; `fresh` bypasses the cache, `source` forces one.
 */
export async function clockedAnswers(
  setup: TestConfig,
  engines: Engines,
  businesses: () => string[],
  options: {
    start: number;
    counters?: ResultCacheObserver;
    engineRead?: (rowsRead: number) => void;
  },
) {
  let clock = options.start;
  const store = await openResultStore({
    redisUrl: setup.config.redisUrl,
    prefix: setup.config.redisPrefix,
    maxBytes: 64 * 1024 * 1024,
    guard: setup.config.redisLimits,
  });
  const cache = new ResultCache(store, options.counters);
  const executor = new QueryExecutor({
    clickhouse: engines.clickhouse.client,
    limits: { timeoutMs: 60_000 },
    cache,
    engineRead: (read) => options.engineRead?.(read.rows_read),
  });
  const deps: AnalyticsDeps = analyticsDeps(engines, { now: () => new Date(clock), executor });
  const ask = (
    query: QueryRequest,
    at: number,
    asked: { fresh?: boolean; source?: string } = {},
  ): Promise<Answer> => {
    clock = at;
    return runQuery(deps, query, {
      signal: new AbortController().signal,
      businesses: businesses(),
      useCache: !asked.fresh,
      ...(asked.source ? { source: asked.source as never } : {}),
    });
  };
  return { deps, cache, ask };
}

/** What two answers to one query must share: all but the figures of how it was obtained. */
export function answered(answer: Answer) {
  const { elapsed_ms, rows_read, bytes_read, cache, query_id, data_as_of, ...rest } =
    answer.metadata as Record<string, unknown>;
  return { data: answer.data, metadata: rest, warnings: answer.warnings };
}

/** Zones with and without daylight saving, and one a half hour off. */
export const ZONES = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata'];

/**
 * Random queries over the given choices: hourly ones over a day only (a week of hours is a
 * long series), a comparison wherever the period has one before it.
 */
export function queryRequests(choices: {
  metrics: MetricName[];
  dimensions: fc.Arbitrary<DimensionName[]>;
  periods: string[];
  compares: Array<string | null>;
}): fc.Arbitrary<QueryRequest> {
  return fc
    .record({
      metrics: fc.subarray(choices.metrics, { minLength: 1, maxLength: 3 }),
      dimensions: choices.dimensions,
      period: fc.constantFrom(...choices.periods),
      timezone: fc.constantFrom(...ZONES),
      compare: fc.constantFrom(...choices.compares),
      totals: fc.boolean(),
    })
    .map((r): QueryRequest => {
      const hourly = r.dimensions.includes('hour');
      const period = hourly ? (r.period === 'yesterday' ? 'yesterday' : 'today') : r.period;
      return {
        metrics: r.metrics,
        dimensions: r.dimensions,
        period,
        timezone: r.timezone,
        ...(r.totals ? { include: ['totals'] } : {}),
        ...(r.compare && period !== 'all_time' ? { compare: r.compare } : {}),
      } as QueryRequest;
    });
}
