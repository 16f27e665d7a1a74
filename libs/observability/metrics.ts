import client from 'prom-client';

/**
 * Counted by the rate limiter and the idempotency layer, which import them directly rather
 * than being handed a registry. Created outside any registry and added to each Cairn registry,
 * so every scrape shows them; several apps in one process (tests) share these two only.
 */
export const rateLimitRejections = new client.Counter({
  name: 'cairn_rate_limit_rejections_total',
  help: 'Requests refused with 429 because the caller spent its per-minute budget.',
  registers: [],
});
export const idempotencyReplays = new client.Counter({
  name: 'cairn_idempotency_replays_total',
  help: 'POST/PUT requests answered by replaying a stored response for their Idempotency-Key.',
  registers: [],
});

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface CairnMetrics {
  readonly registry: client.Registry;
  readonly httpDuration: client.Histogram<'method' | 'route' | 'status'>;
  readonly analytics: {
    readonly duration: client.Histogram<'outcome'>;
    readonly rowsRead: client.Counter;
    readonly bytesRead: client.Counter;
    readonly warnings: client.Counter<'code'>;
  };
  readonly projector: {
    readonly batchFacts: client.Histogram;
    readonly batchDuration: client.Histogram;
    readonly factsProjected: client.Counter;
  };
}

/** Cairn's own registry and metric families, so tests and several apps in one process never share them. */
export function createMetrics(role: string): CairnMetrics {
  const registry = new client.Registry();
  registry.setDefaultLabels({ role });
  client.collectDefaultMetrics({ register: registry });
  registry.registerMetric(rateLimitRejections);
  registry.registerMetric(idempotencyReplays);
  const registers = [registry];
  return {
    registry,
    httpDuration: new client.Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by method, route template (never the raw path) and status.',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: SECONDS,
      registers,
    }),
    analytics: {
      duration: new client.Histogram({
        name: 'cairn_analytics_query_duration_seconds',
        help: 'Time to answer POST /api/v1/query, by outcome (ok or error).',
        labelNames: ['outcome'] as const,
        buckets: SECONDS,
        registers,
      }),
      rowsRead: new client.Counter({
        name: 'cairn_analytics_rows_read_total',
        help: 'Rows ClickHouse read to answer analytics queries.',
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
        registers,
      }),
      factsProjected: new client.Counter({
        name: 'cairn_projector_facts_projected_total',
        help: 'Facts this process projected into ClickHouse (a re-sent batch counts again).',
        registers,
      }),
    },
  };
}
