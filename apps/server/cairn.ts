import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type express from 'express';
import { queryRoutes } from '../../libs/analytics/query.route.ts';
import { authMiddleware } from '../../libs/auth/auth.middleware.ts';
import { type MasterKey, resolveMasterKey } from '../../libs/auth/master-key.ts';
import { openTokenCache } from '../../libs/auth/token-cache.ts';
import { tokenRoutes } from '../../libs/auth/tokens.routes.ts';
import type { Config } from '../../libs/config/config.ts';
import { instrumentAnalyticsRoutes } from '../../libs/observability/analytics-metrics.ts';
import { createLogger, type Logger } from '../../libs/observability/logger.ts';
import { createMetrics } from '../../libs/observability/metrics.ts';
import { Idempotency } from '../../libs/platform/idempotency.ts';
import { createRateLimiter, type RateClass } from '../../libs/platform/rate-limit.ts';
import type { Route } from '../../libs/platform/route.ts';
import {
  batchObserver,
  registerProjectionGauges,
} from '../../libs/projection/projection-metrics.ts';
import {
  type RunningProjector,
  startProjector,
  wakeProjector,
} from '../../libs/projection/projector-jobs.ts';
import { type Engines, openEngines } from '../../libs/storage/engines.ts';
import { resolveCursorKey } from '../../libs/tasks/cursor-key.ts';
import { dependencyRoutes } from '../../libs/tasks/dependency.routes.ts';
import { taskRoutes } from '../../libs/tasks/tasks.routes.ts';
import { createApp } from './app.ts';
import { trackHttp } from './http-drain.ts';

export interface CairnOptions {
  config: Config;
  logger?: Logger;
  /** The clock every use case reads; tests fix it. */
  now?: () => Date;
  /** Requests per minute by class; the contract's 60 / 1000 / 5000 unless a test says otherwise. */
  rateLimits?: Partial<Record<RateClass, number>>;
}

export interface Cairn {
  config: Config;
  masterKey: MasterKey;
  engines: Engines;
  app: express.Express;
  /** Every mounted operation, for tests that sweep the whole route table. */
  routes: Route[];
  server: Server;
  /** Base URL of the HTTP server. */
  url: string;
  close(): Promise<void>;
}

/** Wires engines, the projector and the HTTP API for the configured role, and starts them. */
export async function startCairn(options: CairnOptions): Promise<Cairn> {
  const { config } = options;
  const logger = options.logger ?? createLogger(config.logLevel);
  const now = options.now ?? (() => new Date());
  const engines = await openEngines(config);
  const db = engines.postgres.db;
  const clickhouse = engines.clickhouse.client;
  const metrics = createMetrics(config.role);
  registerProjectionGauges(metrics, { db, queue: engines.queue, now });

  let projector: RunningProjector | undefined;
  if (config.role !== 'api') {
    projector = await startProjector(
      engines.queue,
      {
        db,
        clickhouse,
        batchSize: config.projectorBatchSize,
        now,
        onBatch: batchObserver(metrics),
      },
      config.projectorPollMs,
    );
  }

  const masterKey = await resolveMasterKey({
    configured: config.masterKey,
    embedded: config.databaseUrl === undefined,
    dataDir: config.dataDir,
  });
  if (masterKey.generated) {
    logger.warn({ file: masterKey.file }, 'generated a master key for the token endpoints');
  }

  // Every role serves HTTP: the projector answers /healthz, /readyz and /metrics only.
  const factsCommitted = wakeProjector(engines.queue);
  const cursorKey = await resolveCursorKey({
    configured: config.cursorSecret,
    masterKey: masterKey.value,
    db,
  });
  const tokens = await openTokenCache(engines.postgres);
  const routes =
    config.role === 'projector'
      ? []
      : [
          ...tokenRoutes({ db, now, revoked: () => tokens.cache.clear() }),
          ...taskRoutes({ db, now, factsCommitted }),
          ...dependencyRoutes({ db, now, factsCommitted, cursorKey }),
          ...instrumentAnalyticsRoutes(
            queryRoutes({
              db,
              clickhouse,
              now,
              maxRows: config.queryMaxRows,
              timeoutMs: config.queryTimeoutMs,
              staleAfterMs: config.staleAfterMs,
            }),
            metrics,
          ),
        ];
  const rateLimiter = await createRateLimiter({
    redisUrl: config.redisUrl,
    prefix: config.redisPrefix,
    limits: options.rateLimits,
    logger,
  });
  const app = createApp({
    logger,
    authenticate: authMiddleware({ db, masterKey: masterKey.value, now, tokenCache: tokens.cache }),
    rateLimiter,
    idempotency: new Idempotency({ db, now, masterKey: masterKey.value }),
    metrics,
    // A draining instance reports not-ready so a load balancer stops sending it requests.
    readiness: async () => ({
      ...(await engines.check()),
      ...(http.draining ? { http: 'draining' } : {}),
    }),
    routes,
  });
  const server = app.listen(config.port, config.host);
  const http = trackHttp(server);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address() as AddressInfo;
  const host = address.address.includes(':') ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;

  return {
    config,
    masterKey,
    engines,
    app,
    routes,
    server,
    url,
    /** Graceful: stop accepting, answer what is in flight, finish the batch in hand, close engines. */
    async close() {
      await http.drain();
      projector?.stop();
      await rateLimiter.close();
      await tokens.close();
      await engines.close();
    },
  };
}
