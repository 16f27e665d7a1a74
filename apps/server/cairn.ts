import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type express from 'express';
import { loadClickHouseZones } from '../../libs/analytics/clickhouse-zones.ts';
import type { Admission } from '../../libs/analytics/execute/admission.ts';
import { ExportGate } from '../../libs/analytics/export-gate.ts';
import { ExportSpool } from '../../libs/analytics/export-spool.ts';
import { queryBodySchema } from '../../libs/analytics/parse/query.schemas.ts';
import { queryRoutes } from '../../libs/analytics/query.routes.ts';
import type { AnalyticsDeps } from '../../libs/analytics/query.service.ts';
import { authMiddleware } from '../../libs/auth/auth.middleware.ts';
import { authorize } from '../../libs/auth/authorize.ts';
import { type MasterKey, resolveMasterKey } from '../../libs/auth/master-key.ts';
import { tokenRoutes } from '../../libs/auth/token.routes.ts';
import { openTokenCache } from '../../libs/auth/token-cache.ts';
import type { Config } from '../../libs/config/config.ts';
import { erasureRoutes } from '../../libs/erasure/erasure.routes.ts';
import { installationLedger } from '../../libs/erasure/erasure-ledger.ts';
import { ErasureRunner } from '../../libs/erasure/erasure-runner.ts';
import { type BodyCheckOptions, BodyChecks } from '../../libs/http/body-checks.ts';
import type { Route } from '../../libs/http/route.ts';
import { Idempotency } from '../../libs/idempotency/idempotency.ts';
import { openControlChannel } from '../../libs/lifecycle/control-channel.ts';
import { takeBackup } from '../../libs/lifecycle/embedded-backup.ts';
import {
  engineReads,
  instrumentAnalyticsRoutes,
} from '../../libs/observability/analytics-metrics.ts';
import { circuitBreakerMetrics } from '../../libs/observability/breaker-metrics.ts';
import { createLogger, type Logger } from '../../libs/observability/logger.ts';
import { createMetrics } from '../../libs/observability/metrics.ts';
import { openFreshness } from '../../libs/projection/freshness-memo.ts';
import { InsertPacing } from '../../libs/projection/insert-pacing.ts';
import { startOutboxRetention } from '../../libs/projection/outbox-retention.ts';
import { changesReader } from '../../libs/projection/projection-changes.ts';
import {
  batchObserver,
  fillObserver,
  registerLeaderGauge,
  registerProjectionGauges,
  registerRollupGauges,
} from '../../libs/projection/projection-metrics.ts';
import { startProjector, wakeProjector } from '../../libs/projection/projector-jobs.ts';
import {
  type LeaderWork,
  ProjectorLease,
  whileLeading,
} from '../../libs/projection/projector-lease.ts';
import { RollupBuilds, rollupsNeedingBackfill } from '../../libs/projection/rollup-builds.ts';
import {
  createRateLimiter,
  DEFAULT_RATE_LIMITS,
  RATE_WINDOW_SECONDS,
  type RateClass,
  rateSubject,
} from '../../libs/rate-limit/rate-limit.ts';
import { type Engines, openEngines, tighteningMessage } from '../../libs/storage/engines.ts';
import { postgresTransactor } from '../../libs/storage/postgres-transactor.ts';
import { openRateCounterStore } from '../../libs/storage/rate-counter-stores.ts';
import { advertiseServer } from '../../libs/storage/running-server.ts';
import { postgresWriteProbe, WriteHealth } from '../../libs/storage/write-health.ts';
import { resolveCursorKeys } from '../../libs/tasks/cursor-key.ts';
import { dependencyRoutes } from '../../libs/tasks/dependency.routes.ts';
import { graphReadRoutes } from '../../libs/tasks/graph/graph-reads.routes.ts';
import { taskRoutes } from '../../libs/tasks/task.routes.ts';
import { embedRoutes } from '../../libs/views/embed.routes.ts';
import { viewRoutes } from '../../libs/views/view.routes.ts';
import { viewGaugeRoutes } from '../../libs/views/view-gauges.routes.ts';
import { createApp } from './app.ts';
import { embedPage } from './embed-page.ts';
import { trackHttp } from './http-drain.ts';
import { createHttpServer, listenBacklog } from './http-server.ts';
import { openQueryCapacity } from './query-capacity.ts';
import { heldFor, READINESS_HOLD_MS } from './readiness-memo.ts';
import { startRollupBackfill } from './rollup-startup.ts';
import { applyRuntimeTuning } from './runtime-tuning.ts';

export interface CairnOptions {
  config: Config;
  logger?: Logger;
  /** The clock every use case reads; tests fix it. */
  now?: () => Date;
  /** Requests per minute by class; the contract's 60 / 1000 / 5000 unless a test says otherwise. */
  rateLimits?: Partial<Record<RateClass, number>>;
  /** How request bodies are checked off the event loop; tests shorten the deadline. */
  bodyChecks?: Partial<BodyCheckOptions>;
}

export interface Cairn {
  config: Config;
  masterKey: MasterKey;
  engines: Engines;
  /** Analytics admission (slots and queue), for operators' tools and tests. */
  queryAdmission: Admission;
  /** Which rollups are complete (queries answer from no other). */
  rollups: RollupBuilds;
  app: express.Express;
  /** Every mounted operation, for tests that sweep the whole route table. */
  routes: Route[];
  /** Parses and validates request bodies and lends the slabs large ones are read into. */
  bodyChecks: BodyChecks;
  server: Server;
  /** Base URL of the HTTP server. */
  url: string;
  close(): Promise<void>;
}

/** Facts the outbox retention removes per transaction: a few milliseconds of locks each. */
const RETENTION_BATCH = 1_000;

/** Wires engines, the projector and the HTTP API for the configured role, and starts them. */
export async function startCairn(options: CairnOptions): Promise<Cairn> {
  const { config } = options;
  const logger = options.logger ?? createLogger(config.logLevel);
  const now = options.now ?? (() => new Date());
  // Before anything starts a worker thread or a context, so they all see the same flags.
  const tuning = applyRuntimeTuning(config.runtime);
  logger.debug({ applied: tuning.applied }, 'runtime tuning');
  // Before anything opens: a key file that fails the strength check stops the start with nothing
  // to close.
  const masterKey = await resolveMasterKey({
    configured: config.masterKey,
    embedded: config.embedded.postgres,
    dataDir: config.dataDir,
  });
  // Before the engines open: their adapters add statement spans only while tracing runs.
  const tracing = config.tracing
    ? (await import('../../libs/tracing/tracing-sdk.ts')).startTracing(config.tracing)
    : undefined;
  const metrics = createMetrics(config.role);
  const breakerObserver = circuitBreakerMetrics(metrics.registry, logger);
  const engines = await openEngines(config, {
    breakerObserver,
    onTightened: (lines) => {
      for (const line of lines) logger.warn(line, tighteningMessage(line));
    },
  });
  const db = engines.postgres.db;
  const clickhouse = engines.clickhouse.client;
  registerProjectionGauges(metrics, { db, queue: engines.queue, now });
  const rollups = await new RollupBuilds(clickhouse).start();
  registerRollupGauges(metrics, rollups);
  // Over empty facts every rollup is complete: any process may say so, leader or not, so one
  // that never leads does not read facts for what its views already hold.
  await rollupsNeedingBackfill(rollups);
  // One projector process projects at a time (the projector lease); retention and a rollup
  // fill run only where it does. The api role has none of them.
  const lease =
    config.role === 'api'
      ? undefined
      : new ProjectorLease(db, {
          ttlMs: config.projectorLeaseMs,
          onError: (error) => logger.warn({ err: error }, 'projector lease: renewal failed'),
        });
  let leaderWork: LeaderWork | undefined;
  if (lease) {
    registerLeaderGauge(metrics, lease);
    lease.watch((leading) =>
      logger.info(
        { holder: lease.holder },
        leading ? 'projector lease taken: projecting' : 'projector lease lost: standing by',
      ),
    );
    leaderWork = whileLeading(
      lease,
      async () => {
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
      },
      (error) => logger.error({ err: error }, 'projector: starting or stopping its work failed'),
    );
    await lease.start();
    await leaderWork.settled();
  }

  if (masterKey.generated) {
    logger.warn({ file: masterKey.file }, 'generated a master key for the token endpoints');
  }

  // Every role serves HTTP: the projector answers /healthz, /readyz and /metrics only.
  const wake = wakeProjector(engines.queue);
  const freshness = await openFreshness(engines.postgres);
  const cursorKeys = await resolveCursorKeys({
    configured: config.cursorSecret,
    configuredPrevious: config.cursorSecretPrevious,
    masterKey: masterKey.value,
    masterKeyPrevious: config.masterKeyPrevious,
    db,
  });
  // During a rotation the previous master key still opens the token endpoints.
  const masterKeys = [masterKey.value, config.masterKeyPrevious].filter(
    (key): key is string => key !== undefined,
  );
  const tokens = await openTokenCache(engines.postgres);
  const capacity = await openQueryCapacity({
    config,
    engines,
    registry: metrics.registry,
    logger,
    engineRead: engineReads(metrics),
    breakerObserver,
  });
  const rateLimits = {
    ...DEFAULT_RATE_LIMITS,
    embed: config.embedRateLimit,
    ...options.rateLimits,
  };
  const exportSpool = new ExportSpool(config.spoolDir, {
    engineWrites: engines.clickhouse.kind === 'chdb',
  });
  await exportSpool.clear();
  const erasureDeps = {
    db,
    clickhouse,
    cluster: config.clickhouseCluster,
    now,
    masterKeys,
    batchSize: config.projectorBatchSize,
    chdb: engines.clickhouse.kind === 'chdb',
    forgetCachedAnswers: async (business: string) => {
      await capacity.cache?.forget(business);
    },
    ledger: installationLedger(config),
  };
  const erasures = new ErasureRunner(erasureDeps, logger);
  const analytics: AnalyticsDeps = {
    clickhouse,
    freshness: (at) => freshness.read(at),
    changes: changesReader(db),
    rollups: () => rollups.ready(),
    now,
    maxRows: config.queryMaxRows,
    exportMaxRows: config.exportMaxRows,
    timeoutMs: config.queryTimeoutMs,
    staleAfterMs: config.staleAfterMs,
    maxMemoryBytes: config.queryMaxMemoryBytes,
    executor: capacity.executor,
    admission: capacity.admission,
    exportSpool,
    exportGate: new ExportGate(config.exportConcurrencyPerPrincipal),
    csvFormulaEscape: config.csvFormulaEscape,
    zones: await loadClickHouseZones(clickhouse),
  };
  const viewDeps = {
    db,
    now,
    analytics,
    querySchema: queryBodySchema(analytics.maxRows, analytics.zones),
    gauges: {
      maxSeries: config.viewMetricsMaxSeries,
      intervalMs: config.viewMetricsIntervalS * 1000,
    },
  };
  const routes =
    config.role === 'projector'
      ? []
      : [
          ...tokenRoutes({
            db,
            now,
            rateLimitOf: (principal) => {
              const tier =
                rateSubject(principal, () => '').rateClass === 'service_account'
                  ? 'service_account'
                  : 'user';
              return { tier, limit: rateLimits[tier], window_seconds: RATE_WINDOW_SECONDS };
            },
            revoked: () => tokens.cache.clear(),
          }),
          ...erasureRoutes({ erasure: erasureDeps, run: (business) => erasures.run(business) }),
          ...taskRoutes(
            { db, now, wakeProjector: wake },
            { maxListDepth: config.taskListMaxDepth },
          ),
          ...dependencyRoutes({
            db,
            now,
            wakeProjector: wake,
            cursorKey: cursorKeys.current,
            previousCursorKeys: cursorKeys.previous,
          }),
          ...graphReadRoutes({ db, now }),
          ...instrumentAnalyticsRoutes(queryRoutes(analytics), metrics),
          ...viewRoutes(viewDeps),
          ...embedRoutes({ ...viewDeps, page: embedPage }),
          ...viewGaugeRoutes(viewDeps),
        ];
  const rateCounters = await openRateCounterStore({
    redisUrl: config.redisUrl,
    prefix: config.redisPrefix,
    guard: { ...config.redisLimits, observer: breakerObserver },
  });
  const rateLimiter = createRateLimiter({ store: rateCounters, limits: rateLimits });
  const bodyChecks = new BodyChecks(routes, {
    onError: (error) => logger.error({ err: error }, 'a body-check worker thread died'),
    ...options.bodyChecks,
  });
  const writeHealth = new WriteHealth(postgresWriteProbe(db));
  const engineChecks = heldFor(READINESS_HOLD_MS, async () => {
    const [engineStates, rateLimits, capacityChecks] = await Promise.all([
      engines.check(),
      rateCounters.check(),
      capacity.check(),
    ]);
    return { ...engineStates, rate_limits: rateLimits, ...capacityChecks };
  });
  const app = createApp({
    logger,
    writeHealth,
    authenticate: authMiddleware({ db, masterKey: masterKeys, now, tokenCache: tokens.cache }),
    rateLimiter,
    corsOrigins: config.corsOrigins,
    sendIdleTimeoutMs: config.sendIdleTimeoutMs,
    router: {
      authorize,
      transact: writeHealth.watch(postgresTransactor(db)),
      bodyChecks,
      onLargeBody: tuning.onLargeBody,
      idempotency: new Idempotency({
        db,
        now,
        masterKey: masterKey.value,
        masterKeyPrevious: config.masterKeyPrevious,
        maxResponseBytes: config.idempotencyMaxResponseBytes,
        readAnswers: {
          maxKeys: config.idempotencyQueryMaxKeys,
          maxBytes: config.idempotencyQueryMaxBytes,
        },
        onReplay: () => metrics.idempotencyReplays.inc(),
      }),
    },
    metrics,
    // A draining instance reports not-ready so a load balancer stops sending it requests.
    readiness: async () => ({
      ...(await engineChecks()),
      ...(http.draining ? { http: 'draining' } : {}),
    }),
    routes,
  });
  const server = createHttpServer(app, config.httpLimits, tuning.serverOptions(app)).listen({
    port: config.port,
    host: config.host,
    backlog: listenBacklog(config.httpLimits),
  });
  const http = trackHttp(server);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  // Erasures a stopped or crashed process left running carry on (the API role runs them).
  if (config.role !== 'projector') await erasures.resume();
  const address = server.address() as AddressInfo;
  const host = address.address.includes(':') ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  // Embedded engines: the CLI finds this server here and works through it (tokens commands,
  // and an erasure, which needs ClickHouse too).
  const unadvertise =
    config.embedded.postgres || config.embedded.clickhouse
      ? await advertiseServer(config.dataDir, url)
      : undefined;
  // Only the holder of embedded engines can copy them: `cli backup` asks it here.
  const control =
    config.embedded.postgres && config.embedded.clickhouse
      ? await openControlChannel(config.dataDir, {
          backup: (to, onProgress) =>
            takeBackup({
              postgres: engines.postgres,
              clickhouse,
              dataDir: config.dataDir,
              to,
              onProgress,
            }),
        })
      : undefined;

  return {
    config,
    masterKey,
    engines,
    queryAdmission: capacity.admission,
    rollups,
    app,
    routes,
    bodyChecks,
    server,
    url,
    /** Graceful: stop accepting, answer what is in flight, finish the batch in hand, close engines. */
    async close() {
      // Queued analytics callers are answered 503 at once rather than held until the queries
      // ahead of them finish: the drain then waits only for what is already running.
      capacity.admission.close();
      await unadvertise?.();
      await control?.close();
      await http.drain();
      await bodyChecks.close();
      await erasures.stop();
      await leaderWork?.stop();
      await lease?.stop();
      await rollups.close();
      await rateLimiter.close();
      await rateCounters.close();
      await tokens.close();
      await freshness.close();
      await capacity.close();
      await engines.close();
      await tracing?.close();
    },
  };
}
