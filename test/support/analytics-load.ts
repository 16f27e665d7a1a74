import type { ClickHouseClient } from '@clickhouse/client';
import { generateFacts } from '../../libs/demo/fact-generator.ts';
import { waitFor } from './engines.ts';
import { http } from './http.ts';
import { parseMetrics, sampleValue } from './prometheus.ts';

/** Enough generated facts that HEAVY_QUERY keeps chDB busy for a good fraction of a second. */
export const HEAVY_FACTS = 1_000_000;

/** Hundreds of thousands of groups, each with a percentile state: heavy on time and memory. */
export const HEAVY_QUERY = {
  metrics: ['p90_cycle_time_hours', 'tasks_created', 'tasks_completed'],
  dimensions: ['day', 'assignee', 'project'],
  period: 'this_year',
};

/** One number over one business: next to nothing to compute. */
export const CHEAP_QUERY = { metrics: ['tasks_created'], business: 'biz-1', period: 'today' };

export async function loadFacts(clickhouse: ClickHouseClient, facts = HEAVY_FACTS): Promise<void> {
  await generateFacts(clickhouse, { facts, seed: 7, now: new Date(), businesses: 4 });
}

export async function metricValue(url: string, name: string): Promise<number> {
  const res = await http(url, 'GET', '/metrics');
  return sampleValue(parseMetrics(res.text), name);
}

/** Waits until the server reports at least `queued` analytics queries waiting for a slot. */
export function untilQueued(url: string, queued: number): Promise<true> {
  return waitFor(
    async () => (await metricValue(url, 'cairn_query_admission_queued')) >= queued || undefined,
    { timeoutMs: 120_000, intervalMs: 20 },
  );
}
