import type client from 'prom-client';
import { Admission } from '../../libs/analytics/execute/admission.ts';
import {
  QueryExecutor,
  type QueryExecutorDeps,
} from '../../libs/analytics/execute/query-execution.ts';
import { ResultCache } from '../../libs/analytics/execute/result-cache.ts';
import type { Config } from '../../libs/config/config.ts';
import type { Logger } from '../../libs/observability/logger.ts';
import { queryCapacityMetrics } from '../../libs/observability/query-capacity-metrics.ts';
import type { BreakerObserver } from '../../libs/storage/circuit-breaker.ts';
import type { Engines } from '../../libs/storage/engines.ts';
import { openResultStore } from '../../libs/storage/result-stores.ts';

export interface QueryCapacity {
  executor: QueryExecutor;
  admission: Admission;
  cache: ResultCache | null;
  /** The cache store's state, for /readyz: `degraded` while queries go without it. */
  check(): Promise<Record<string, 'ok' | 'degraded'>>;
  close(): Promise<void>;
}

type CapacityConfig = Pick<
  Config,
  | 'redisUrl'
  | 'redisPrefix'
  | 'queryTimeoutMs'
  | 'queryMaxMemoryBytes'
  | 'queryConcurrency'
  | 'queryConcurrencyPerPrincipal'
  | 'queryQueuePerPrincipal'
  | 'queryQueueWaitMs'
  | 'queryCacheBytes'
  | 'redisLimits'
>;

/** Admission, the result cache and the executor that puts both around the engine. */
export async function openQueryCapacity(options: {
  config: CapacityConfig;
  engines: Pick<Engines, 'clickhouse'>;
  registry: client.Registry;
  logger: Logger;
  /** Operator metrics of what the engine read (`engineReads`). */
  engineRead?: QueryExecutorDeps['engineRead'];
  /** Hears of the Redis cache's circuit breaker (metrics, logs). */
  breakerObserver?: BreakerObserver;
}): Promise<QueryCapacity> {
  const { config, engines } = options;
  const metrics = queryCapacityMetrics(options.registry, options.logger);
  const admission = new Admission(
    {
      total: config.queryConcurrency,
      perPrincipal: config.queryConcurrencyPerPrincipal,
      queuePerPrincipal: config.queryQueuePerPrincipal,
      maxWaitMs: config.queryQueueWaitMs,
      // chDB runs one statement at a time and cannot interrupt it: letting several in would only
      // queue them inside the engine, first come first served, where fairness cannot reach
      // them. So it is handed out one statement at a time, in turns between principals.
      ...(engines.clickhouse.kind === 'chdb' ? { statementSlots: 1 } : {}),
    },
    metrics.admission,
  );
  metrics.watch(() => admission.state);
  const store =
    config.queryCacheBytes > 0
      ? await openResultStore({
          redisUrl: config.redisUrl,
          prefix: config.redisPrefix,
          maxBytes: config.queryCacheBytes,
          guard: { ...config.redisLimits, observer: options.breakerObserver },
        })
      : null;
  const cache = store ? new ResultCache(store, metrics.cache) : null;
  const executor = new QueryExecutor({
    clickhouse: engines.clickhouse.client,
    limits: { timeoutMs: config.queryTimeoutMs, maxMemoryBytes: config.queryMaxMemoryBytes },
    admission,
    cache,
    ...(options.engineRead ? { engineRead: options.engineRead } : {}),
  });
  return {
    executor,
    admission,
    cache,
    async check(): Promise<Record<string, 'ok' | 'degraded'>> {
      if (!cache) return {};
      try {
        await cache.ping();
        return { query_cache: 'ok' };
      } catch {
        return { query_cache: 'degraded' };
      }
    },
    async close() {
      admission.close();
      await cache?.close();
    },
  };
}
