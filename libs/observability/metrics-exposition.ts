import client from 'prom-client';

const OPENMETRICS = client.Registry.OPENMETRICS_CONTENT_TYPE;
let rendering: Promise<unknown> = Promise.resolve();

/**
 * `/metrics` in the format the scraper asks for: OpenMetrics (which carries the latency
 * histograms' exemplars, each naming a trace) when its Accept names
 * `application/openmetrics-text`, as Prometheus's does, and the classic text format otherwise.
 */
export async function exposeMetrics(
  registry: client.Registry,
  accept: string | undefined,
): Promise<{ contentType: string; body: string }> {
  if (!accept?.includes('application/openmetrics-text')) {
    const body = await serialised(() => registry.metrics());
    return { contentType: registry.contentType, body };
  }
  return { contentType: OPENMETRICS, body: await serialised(() => openMetrics(registry)) };
}

/**
 * prom-client renders OpenMetrics from a registry of that type, and doing so renames its
 * counters for good (it drops their `_total`, which the classic format needs). The same metric
 * objects are rendered through a second registry, their names put back afterwards, one
 * rendering at a time so a classic scrape never sees them renamed.
 */
async function openMetrics(registry: client.Registry): Promise<string> {
  const metrics = registry.getMetricsAsArray() as unknown as Array<{ name: string }>;
  const names = metrics.map((metric) => metric.name);
  const open = new client.Registry<client.OpenMetricsContentType>();
  open.setContentType(OPENMETRICS);
  for (const metric of metrics) open.registerMetric(metric as unknown as client.Metric);
  open.setDefaultLabels(defaultLabels(registry));
  try {
    return await open.metrics();
  } finally {
    metrics.forEach((metric, at) => {
      metric.name = names[at] as string;
    });
  }
}

function serialised<T>(work: () => Promise<T>): Promise<T> {
  const next = rendering.then(work, work);
  rendering = next.catch(() => {});
  return next;
}

function defaultLabels(registry: client.Registry): Record<string, string> {
  return (registry as unknown as { _defaultLabels: Record<string, string> })._defaultLabels;
}
