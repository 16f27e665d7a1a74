import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type express from 'express';
import { loadClickHouseZones } from '../../libs/analytics/clickhouse-zones.ts';
import type { Admission } from '../../libs/analytics/execute/admission.ts';
import { ExportGate } from '../../libs/analytics/export-gate.ts';
import { ExportSpool } from '../../libs/analytics/export-spool.ts';
import type { AnalyticsDeps } from '../../libs/analytics/query.service.ts';
import { authMiddleware } from '../../libs/auth/auth.middleware.ts';
import { authorize } from '../../libs/auth/authorize.ts';
import { type MasterKey, resolveMasterKey } from '../../libs/auth/master-key.ts';
import { openTokenCache } from '../../libs/auth/token-cache.ts';
import type { Config } from '../../libs/config/config.ts';
import { installationLedger } from '../../libs/erasure/erasure-ledger.ts';
import { ErasureRunner } from '../../libs/erasure/erasure-runner.ts';
import { type BodyCheckOptions, BodyChecks } from '../../libs/http/body-check-pool.ts';
import type { Route } from '../../libs/http/route.ts';
import { Idempotency } from '../../libs/idempotency/idempotency.ts';
import { engineReads } from '../../libs/observability/analytics-metrics.ts';
import { circuitBreakerMetrics } from '../../libs/observability/breaker-metrics.ts';
import { createLogger, type Logger } from '../../libs/observability/logger.ts';
import { createMetrics } from '../../libs/observability/metrics.ts';
import { openFreshness } from '../../libs/projection/freshness-memo.ts';
import { changesReader } from '../../libs/projection/projection-changes.ts';
import {
  registerProjectionGauges,
  registerRollupGauges,
} from '../../libs/projection/projection-metrics.ts';
import { wakeProjector } from '../../libs/projection/projector-jobs.ts';
import { RollupBuilds, rollupsNeedingBackfill } from '../../libs/projection/rollup-builds.ts';
import {
  createRateLimiter,
  DEFAULT_RATE_LIMITS,
  type RateClass,
} from '../../libs/rate-limit/rate-limit.ts';
import { type Engines, openEngines, tighteningMessage } from '../../libs/storage/engines.ts';
import { postgresTransactor } from '../../libs/storage/postgres-transactor.ts';
import { openRateCounterStore } from '../../libs/storage/rate-counter-stores.ts';
import { postgresWriteProbe, WriteHealth } from '../../libs/storage/write-health.ts';
import { resolveCursorKeys } from '../../libs/tasks/cursor-key.ts';
import { apiRoutes } from './api-routes.ts';
import { createApp } from './app.ts';
import { openEmbeddedAccess } from './embedded-access.ts';
import { httpDrain } from './http-drain.ts';
import { createHttpServer, listenBacklog } from './http-server.ts';
import { Lifecycle } from './lifecycle.ts';
import { startProjectorLeadership } from './projector-leadership.ts';
import { openQueryCapacity } from './query-capacity.ts';
import { heldFor, READINESS_HOLD_MS } from './readiness-memo.ts';
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

/**
 * Wires engines, the projector and the HTTP API for the configured role, and starts them. Each
 * part registers its stop as it starts; `close()` stops them in reverse, so the parts start in
 * the reverse of the order they must stop in: HTTP drains first, the engines close last.
 */
export async function startCairn(options: CairnOptions): Promise<Cairn> {
  const logger = options.logger ?? createLogger(options.config.logLevel);
  const lifecycle = new Lifecycle((part, error) =>
    logger.error({ err: error, part }, 'stopping a part failed'),
  );
  return lifecycle.start(() => startParts(lifecycle, options, logger));
}

async function startParts(
  lifecycle: Lifecycle,
  options: CairnOptions,
  logger: Logger,
): Promise<Cairn> {
  const { config } = options;
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

  // Tracing, before the engines open: their adapters add statement spans only while it runs.
  const tracing = config.tracing
    ? (await import('../../libs/tracing/tracing-sdk.ts')).startTracing(config.tracing)
    : undefined;
  lifecycle.adopt('tracing', tracing);

  // The engines, and what reads them for this process alone.
  const metrics = createMetrics(config.role);
  const breakerObserver = circuitBreakerMetrics(metrics.registry, logger);
  const engines = lifecycle.adopt(
    'engines',
    await openEngines(config, {
      breakerObserver,
      onTightened: (lines) => {
        for (const line of lines) logger.warn(line, tighteningMessage(line));
      },
    }),
  );
  const db = engines.postgres.db;
  const clickhouse = engines.clickhouse.client;
  const capacity = lifecycle.adopt(
    'query capacity',
    await openQueryCapacity({
      config,
      engines,
      registry: metrics.registry,
      logger,
      engineRead: engineReads(metrics),
      breakerObserver,
    }),
  );
  const freshness = lifecycle.adopt('freshness', await openFreshness(engines.postgres));
  const tokens = lifecycle.adopt('token cache', await openTokenCache(engines.postgres));

  // Rate limits.
  const rateLimits = {
    ...DEFAULT_RATE_LIMITS,
    embed: config.embedRateLimit,
    ...options.rateLimits,
  };
  const rateCounters = lifecycle.adopt(
    'rate counters',
    await openRateCounterStore({
      redisUrl: config.redisUrl,
      prefix: config.redisPrefix,
      guard: { ...config.redisLimits, observer: breakerObserver },
    }),
  );
  const rateLimiter = lifecycle.adopt(
    'rate limiter',
    createRateLimiter({ store: rateCounters, limits: rateLimits }),
  );

  // Rollups, then the projector where this process leads.
  registerProjectionGauges(metrics, { db, queue: engines.queue, now });
  const rollups = lifecycle.adopt('rollups', await new RollupBuilds(clickhouse).start());
  registerRollupGauges(metrics, rollups);
  // Over empty facts every rollup is complete: any process may say so, leader or not, so one
  // that never leads does not read facts for what its views already hold.
  await rollupsNeedingBackfill(rollups);
  await startProjectorLeadership(lifecycle, { config, engines, rollups, metrics, logger, now });

  if (masterKey.generated) {
    logger.warn({ file: masterKey.file }, 'generated a master key for the token endpoints');
  }

  // Erasures.
  // During a rotation the previous master key still opens the token endpoints.
  const masterKeys = [masterKey.value, config.masterKeyPrevious].filter(
    (key): key is string => key !== undefined,
  );
  const erasure = {
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
  const erasures = new ErasureRunner(erasure, logger);
  lifecycle.started('erasures', () => erasures.stop());

  // The routes. Every role serves HTTP: the projector answers /healthz, /readyz and /metrics only.
  const exportSpool = new ExportSpool(config.spoolDir, {
    engineWrites: engines.clickhouse.kind === 'chdb',
  });
  await exportSpool.clear();
  const zones = await loadClickHouseZones(clickhouse);
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
    zones,
  };
  const cursorKeys = await resolveCursorKeys({
    configured: config.cursorSecret,
    configuredPrevious: config.cursorSecretPrevious,
    masterKey: masterKey.value,
    masterKeyPrevious: config.masterKeyPrevious,
    db,
  });
  const routes = apiRoutes({
    config,
    db,
    now,
    rateLimits,
    tokenCache: tokens.cache,
    erasure,
    erasures,
    wakeProjector: wakeProjector(engines.queue),
    cursorKeys,
    analytics,
    metrics,
  });
  const bodyChecks = lifecycle.adopt(
    'body checks',
    new BodyChecks(routes, {
      onError: (error) => logger.error({ err: error }, 'a body-check worker thread died'),
      ...options.bodyChecks,
    }),
  );

  // The HTTP server.
  const http = httpDrain();
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
  const server = createHttpServer(app, config.httpLimits, tuning.serverOptions(app));
  http.track(server);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
    server.listen({
      port: config.port,
      host: config.host,
      backlog: listenBacklog(config.httpLimits),
    });
  });
  lifecycle.started('http', () => http.drain());
  const url = serverUrl(server);

  // Erasures a stopped or crashed process left running carry on (the API role runs them).
  if (config.role !== 'projector') await erasures.resume();
  await openEmbeddedAccess(lifecycle, { config, engines, url });
  // Stopped first: queued analytics callers are answered 503 at once rather than held until the
  // queries ahead of them finish, so the drain waits only for what is already running.
  lifecycle.started('analytics queue', () => capacity.admission.close());

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
    close: () => lifecycle.close(),
  };
}

/** The base URL a listening `server` answers on. */
function serverUrl(server: Server): string {
  const address = server.address() as AddressInfo;
  const host = address.address.includes(':') ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
