import client from 'prom-client';
import type { AdmissionObserver } from '../analytics/execute/admission.ts';
import type { ResultCacheObserver } from '../analytics/execute/result-cache.ts';
import type { Logger } from './logger.ts';

export interface QueryCapacityMetrics {
  admission: AdmissionObserver;
  cache: ResultCacheObserver;
  /** Feeds the running/queued gauges at scrape time. */
  watch(state: () => { running: number; queued: number }): void;
}

/** The result cache's and admission's metric families, registered in the app's registry. */
export function queryCapacityMetrics(
  registry: client.Registry,
  logger: Logger,
): QueryCapacityMetrics {
  const registers = [registry];
  let state = () => ({ running: 0, queued: 0 });
  const counter = (name: string, help: string) => new client.Counter({ name, help, registers });
  const hits = counter(
    'cairn_query_cache_hits_total',
    'Analytics queries answered from the result cache.',
  );
  const misses = counter(
    'cairn_query_cache_misses_total',
    'Analytics queries the result cache could not answer (or was told to bypass) and the engine ran.',
  );
  const partial = counter(
    'cairn_query_cache_partial_total',
    'Analytics queries computed in part: the closed buckets and settled parts of their kept answer were reused, only the rest ran on the engine (also counted as misses).',
  );
  const coalesced = counter(
    'cairn_query_coalesced_total',
    'Analytics queries answered with the answer of an identical query already running: the engine ran it once for all of them.',
  );
  const evictions = counter(
    'cairn_query_cache_evictions_total',
    'Result cache entries evicted to stay within CAIRN_QUERY_CACHE_BYTES.',
  );
  const errors = counter(
    'cairn_query_cache_errors_total',
    'Result cache reads or writes that failed; each query went on without the cache.',
  );
  const rejections = new client.Counter({
    name: 'cairn_query_admission_rejections_total',
    help: 'Analytics queries refused by admission, by reason (queue_full, wait_expired, shutting_down).',
    labelNames: ['reason'] as const,
    registers,
  });
  const wait = new client.Histogram({
    name: 'cairn_query_admission_wait_seconds',
    help: 'Time admitted analytics queries waited for a slot.',
    buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  new client.Gauge({
    name: 'cairn_query_admission_running',
    help: 'Analytics queries running on the engine now.',
    registers,
    collect() {
      this.set(state().running);
    },
  });
  new client.Gauge({
    name: 'cairn_query_admission_queued',
    help: 'Analytics queries waiting for a slot now.',
    registers,
    collect() {
      this.set(state().queued);
    },
  });
  let warned = false;
  return {
    admission: {
      rejected: (reason) => rejections.inc({ reason }),
      waited: (ms) => wait.observe(ms / 1000),
    },
    cache: {
      hit: () => {
        hits.inc();
        warned = false;
      },
      miss: () => misses.inc(),
      partial: () => partial.inc(),
      coalesced: () => coalesced.inc(),
      evicted: (count) => evictions.inc(count),
      failed: (error) => {
        errors.inc();
        // Once per outage is enough: the counter tells how many queries went without it.
        if (!warned)
          logger.warn({ err: error }, 'result cache unavailable; answering from the engine');
        warned = true;
      },
    },
    watch(next) {
      state = next;
    },
  };
}
