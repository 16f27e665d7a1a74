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
