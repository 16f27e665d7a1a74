import client from 'prom-client';
import { ROLLUP_NAMES } from '../analytics/sources/rollups.ts';
import { type CairnMetrics, observeWithTrace } from '../observability/metrics.ts';
import type { Db } from '../storage/database.ts';
import type { JobQueue } from '../storage/queue.ts';
import { activeTraceIds } from '../tracing/tracing.ts';
import { countUnprojected, loadCheckpoint } from './outbox-reader.ts';
import { projectionFreshness } from './projection-freshness.ts';
import { FACTS_CHECKPOINT, type ProjectorDeps } from './projector.ts';
import type { RollupBuilds } from './rollup-builds.ts';

/** Whether this projector process is the one projecting (the projector lease). */
export function registerLeaderGauge(
  metrics: CairnMetrics,
  lease: { readonly leading: boolean },
): void {
  new client.Gauge({
    name: 'cairn_projector_leader',
    help: 'Whether this process holds the projector lease and projects: 1, or 0 while it stands by.',
    registers: [metrics.registry],
    collect() {
      this.set(lease.leading ? 1 : 0);
    },
  });
}

/**
 * Gauges read at scrape time (`collect()`), so they are true for the whole deployment, not just
 * for what this process happened to do. An engine that does not answer leaves the last value:
 * a scrape must not fail because Postgres or Redis is away (readiness reports that).
 */
export function registerProjectionGauges(
  metrics: CairnMetrics,
  sources: { db: Db; queue: JobQueue; now: () => Date },
): void {
  const registers = [metrics.registry];
  const quietly = async (work: () => Promise<void>) => {
    try {
      await work();
    } catch {}
  };
  new client.Gauge({
    name: 'cairn_projector_lag_seconds',
    help: 'Age of the oldest fact not yet in ClickHouse; 0 when nothing waits.',
    registers,
    async collect() {
      await quietly(async () => {
        this.set((await projectionFreshness(sources.db, sources.now())).lagMs / 1000);
      });
    },
  });
  new client.Gauge({
    name: 'cairn_outbox_backlog_facts',
    help: 'Outbox facts past the projector checkpoint.',
    registers,
    async collect() {
      await quietly(async () => {
        const checkpoint = await loadCheckpoint(sources.db, FACTS_CHECKPOINT);
        this.set(await countUnprojected(sources.db, checkpoint.cursor));
      });
    },
  });
  new client.Gauge({
    name: 'cairn_projector_queue_depth',
    help: 'Projector jobs waiting (including delayed) or running in the job queue.',
    labelNames: ['state'] as const,
    registers,
    async collect() {
      await quietly(async () => {
        const stats = await sources.queue.stats();
        this.set({ state: 'waiting' }, stats.waiting);
        this.set({ state: 'active' }, stats.active);
      });
    },
  });
  new client.Gauge({
    name: 'cairn_projector_failed_jobs',
    help: 'Projector jobs that used every retry and failed.',
    registers,
    async collect() {
      await quietly(async () => {
        this.set((await sources.queue.stats()).failed);
      });
    },
  });
}

/** The projector's per-batch hook, feeding batch size, duration and facts projected. */
export function batchObserver(metrics: CairnMetrics): NonNullable<ProjectorDeps['onBatch']> {
  return ({ facts, seconds }) => {
    metrics.projector.batchFacts.observe(facts);
    observeWithTrace(metrics.projector.batchDuration, {}, seconds, activeTraceIds());
    metrics.projector.factsProjected.inc(facts);
  };
}

/**
 * Which rollups hold every fact (1) and which are still being filled (0): queries that could
 * use a rollup at 0 read facts instead, slower. Read from what `rollup_builds` says, so every
 * process shows the deployment's state.
 */
export function registerRollupGauges(metrics: CairnMetrics, rollups: RollupBuilds): void {
  new client.Gauge({
    name: 'cairn_rollups_complete',
    help: 'Whether each rollup holds every fact (1) or is not filled yet (0).',
    labelNames: ['rollup'] as const,
    registers: [metrics.registry],
    collect() {
      const ready = rollups.ready();
      for (const rollup of ROLLUP_NAMES) this.set({ rollup }, ready.has(rollup) ? 1 : 0);
    },
  });
}

/** The backfill's progress hook: counts the facts read since the last report. */
export function fillObserver(
  metrics: CairnMetrics,
): (progress: { done: number; total: number }) => void {
  let counted = 0;
  return ({ done }) => {
    if (done > counted) metrics.projector.rollupFillFacts.inc(done - counted);
    counted = Math.max(counted, done);
  };
}
