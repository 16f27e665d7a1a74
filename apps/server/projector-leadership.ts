import type { Config } from '../../libs/config/config.ts';
import type { Logger } from '../../libs/observability/logger.ts';
import type { CairnMetrics } from '../../libs/observability/metrics.ts';
import { InsertPacing } from '../../libs/projection/insert-pacing.ts';
import { startOutboxRetention } from '../../libs/projection/outbox-retention.ts';
import {
  batchObserver,
  fillObserver,
  registerLeaderGauge,
} from '../../libs/projection/projection-metrics.ts';
import { startProjector } from '../../libs/projection/projector-jobs.ts';
import { ProjectorLease, whileLeading } from '../../libs/projection/projector-lease.ts';
import type { RollupBuilds } from '../../libs/projection/rollup-builds.ts';
import type { Engines } from '../../libs/storage/engines.ts';
import type { Lifecycle } from './lifecycle.ts';
import { startRollupBackfill } from './rollup-startup.ts';

/** Facts the outbox retention removes per transaction: a few milliseconds of locks each. */
const RETENTION_BATCH = 1_000;

export interface LeadershipDeps {
  config: Config;
  engines: Engines;
  rollups: RollupBuilds;
  metrics: CairnMetrics;
  logger: Logger;
  now: () => Date;
}

/**
 * One projector process projects at a time (the projector lease); retention and a rollup fill run
 * only where it does. The api role has none of them. Resolves once this process has either taken
 * the lease and started its work, or stands by.
 */
export async function startProjectorLeadership(
  lifecycle: Lifecycle,
  deps: LeadershipDeps,
): Promise<void> {
  const { config, logger, metrics } = deps;
  if (config.role === 'api') return;
  const lease = new ProjectorLease(deps.engines.postgres.db, {
    ttlMs: config.projectorLeaseMs,
    onError: (error) => logger.warn({ err: error }, 'projector lease: renewal failed'),
  });
  registerLeaderGauge(metrics, lease);
  lease.watch((leading) =>
    logger.info(
      { holder: lease.holder },
      leading ? 'projector lease taken: projecting' : 'projector lease lost: standing by',
    ),
  );
  const leaderWork = whileLeading(
    lease,
    () => startLeaderWork(deps, lease),
    (error) => logger.error({ err: error }, 'projector: starting or stopping its work failed'),
  );
  // The work stops before the lease is given up, so no standby projects beside it.
  lifecycle.started('projector lease', () => lease.stop());
  lifecycle.started('projector work', () => leaderWork.stop());
  await lease.start();
  await leaderWork.settled();
}

/** The projector, outbox retention and rollup backfill, for as long as this process leads. */
async function startLeaderWork(
  { config, engines, rollups, metrics, logger, now }: LeadershipDeps,
  lease: ProjectorLease,
): Promise<{ stop(): Promise<void> }> {
  const db = engines.postgres.db;
  const clickhouse = engines.clickhouse.client;
  const projector = await startProjector(
    engines.queue,
    {
      db,
      clickhouse,
      batchSize: config.projectorBatchSize,
      pacing: new InsertPacing(config.projectorLingerMs),
      now,
      onBatch: batchObserver(metrics),
      logger,
      leadership: lease,
    },
    config.projectorPollMs,
  );
  const retention = startOutboxRetention({
    db,
    days: config.outboxRetentionDays,
    // Days of retention are wall-clock days, whatever clock the use cases are given.
    batchSize: RETENTION_BATCH,
    // With no retention period, facts go about as soon as they are projected.
    intervalMs: config.outboxRetentionDays === 0 ? 1_000 : 60_000,
    onError: (error) => logger.warn({ err: error }, 'outbox retention: a round failed'),
  });
  const backfill = await startRollupBackfill({
    config,
    db,
    clickhouse,
    rollups,
    logger,
    onProgress: fillObserver(metrics),
  });
  return {
    async stop() {
      await retention.stop();
      await projector.stop();
      await backfill.stop();
    },
  };
}
