import client from 'prom-client';

const REDUNDANT_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface CairnMetrics {
  readonly registry: client.Registry;
  readonly rateLimitRejections: client.Counter;
  readonly idempotencyReplays: client.Counter;
  readonly responsesCut: client.Counter;
  readonly httpDuration: client.Histogram<'method' | 'route' | 'status'>;
  readonly analytics: {
    readonly duration: client.Histogram<'outcome' | 'source' | 'cache'>;
    readonly rowsRead: client.Counter;
    readonly statements: client.Counter;
    readonly bytesRead: client.Counter;
    readonly warnings: client.Counter<'code'>;
  };
  readonly projector: {
    readonly batchFacts: client.Histogram;
    readonly batchDuration: client.Histogram;
    readonly factsProjected: client.Counter;
    readonly rollupFillFacts: client.Counter;
  };
}

/**
 * Records a duration with the sampled trace that took it as the bucket's exemplar (OpenMetrics):
 * a latency spike on a dashboard then opens one of the traces behind it.
 */
export function observeWithTrace<T extends string>(
  histogram: client.Histogram<T>,
  labels: client.LabelValues<T>,
  value: number,
  trace: { trace_id: string; span_id: string } | undefined,
): void {
  histogram.observe({
    labels,
    value,
    // prom-client types exemplar labels as the metric's own label names, which they are not.
    exemplarLabels: (trace ?? {}) as client.LabelValues<T>,
  });
}

/** Cairn's own registry and metric families, so tests and several apps in one process never share them. */
export function createMetrics(role: string): CairnMetrics {
  const registry = new client.Registry();
  registry.setDefaultLabels({ role });
  client.collectDefaultMetrics({ register: registry });
  // prom-client's totals of these are gauges named like counters, which `promtool check metrics`
  // rejects; the per-type gauges beside them sum to the same numbers.
  for (const name of REDUNDANT_DEFAULTS) registry.removeSingleMetric(name);
  const registers = [registry];
  // prom-client takes exemplars only on a registry of the OpenMetrics type, while the classic
  // format stays this registry's own (metrics-exposition.ts renders OpenMetrics on request):
  // histograms with exemplars are made with no registry and registered by hand.
  const exemplars = { enableExemplars: true, registers: [] };
  const metrics = {
    registry,
    rateLimitRejections: new client.Counter({
      name: 'cairn_rate_limit_rejections_total',
      help: 'Requests refused with 429 because the caller spent its per-minute budget.',
      registers,
    }),
    idempotencyReplays: new client.Counter({
      name: 'cairn_idempotency_replays_total',
      help: 'POST/PUT requests answered by replaying a stored response for their Idempotency-Key.',
      registers,
    }),
    responsesCut: new client.Counter({
      name: 'cairn_http_responses_cut_total',
      help: 'Responses cut because their reader took nothing for CAIRN_SEND_IDLE_TIMEOUT_MS.',
      registers,
    }),
    httpDuration: new client.Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by method, route template (never the raw path) and status.',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: SECONDS,
      ...exemplars,
    }),
    analytics: {
      duration: new client.Histogram({
        name: 'cairn_analytics_query_duration_seconds',
        help: 'Time to answer an analytics request, by outcome (ok or error), the source that answered (a table, or none) and the cache result (hit, miss, coalesced or none).',
        labelNames: ['outcome', 'source', 'cache'] as const,
        buckets: SECONDS,
        ...exemplars,
      }),
      rowsRead: new client.Counter({
        name: 'cairn_analytics_rows_read_total',
        help: 'Rows ClickHouse read to answer analytics queries.',
        registers,
      }),
      statements: new client.Counter({
        name: 'cairn_analytics_engine_statements_total',
        help: 'Statements ClickHouse ran for analytics queries (cache hits and shared answers run none).',
        registers,
      }),
      bytesRead: new client.Counter({
        name: 'cairn_analytics_bytes_read_total',
        help: 'Bytes ClickHouse read to answer analytics queries.',
        registers,
      }),
      warnings: new client.Counter({
        name: 'cairn_analytics_warnings_total',
        help: 'Warnings attached to analytics answers, by code.',
        labelNames: ['code'] as const,
        registers,
      }),
    },
    projector: {
      batchFacts: new client.Histogram({
        name: 'cairn_projector_batch_facts',
        help: 'Facts per batch written to ClickHouse.',
        buckets: [1, 10, 100, 500, 1000, 2500, 5000, 10000, 25000, 50000],
        registers,
      }),
      batchDuration: new client.Histogram({
        name: 'cairn_projector_batch_duration_seconds',
        help: 'Time to project one batch: read from the outbox, insert, checkpoint.',
        buckets: SECONDS,
        ...exemplars,
      }),
      factsProjected: new client.Counter({
        name: 'cairn_projector_facts_projected_total',
        help: 'Facts this process projected into ClickHouse (a re-sent batch counts again).',
        registers,
      }),
      rollupFillFacts: new client.Counter({
        name: 'cairn_rollup_fill_facts_total',
        help: 'Facts this process read to fill rollups that did not hold them yet (the replay of blocked changes reads them again).',
        registers,
      }),
    },
  };
  for (const histogram of [
    metrics.httpDuration,
    metrics.analytics.duration,
    metrics.projector.batchDuration,
  ]) {
    registry.registerMetric(histogram);
  }
  return metrics;
}
