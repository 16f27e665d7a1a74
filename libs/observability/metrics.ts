import client from 'prom-client';

/** Cairn's own registry, so tests and several apps in one process never share counters. */
export function createMetricsRegistry(role: string): client.Registry {
  const registry = new client.Registry();
  registry.setDefaultLabels({ role });
  client.collectDefaultMetrics({ register: registry });
  return registry;
}
