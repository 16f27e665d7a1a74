import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type express from 'express';
import { queryRoutes } from '../../libs/analytics/query.route.ts';
import { authMiddleware } from '../../libs/auth/auth.middleware.ts';
import { type MasterKey, resolveMasterKey } from '../../libs/auth/master-key.ts';
import { tokenRoutes } from '../../libs/auth/tokens.routes.ts';
import type { Config } from '../../libs/config/config.ts';
import { createLogger, type Logger } from '../../libs/observability/logger.ts';
import { createMetricsRegistry } from '../../libs/observability/metrics.ts';
import { startProjector, wakeProjector } from '../../libs/projection/projector-jobs.ts';
import { type Engines, openEngines } from '../../libs/storage/engines.ts';
import { taskRoutes } from '../../libs/tasks/tasks.routes.ts';
import { createApp } from './app.ts';

export interface CairnOptions {
  config: Config;
  logger?: Logger;
  /** The clock every use case reads; tests fix it. */
  now?: () => Date;
}

export interface Cairn {
  config: Config;
  masterKey: MasterKey;
  engines: Engines;
  app: express.Express;
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

  if (config.role !== 'api') {
    await startProjector(
      engines.queue,
      { db, clickhouse, batchSize: config.projectorBatchSize, now },
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
  const routes =
    config.role === 'projector'
      ? []
      : [
          ...tokenRoutes({ db, now }),
          ...taskRoutes({ db, now, factsCommitted }),
          ...queryRoutes({
            db,
            clickhouse,
            now,
            maxRows: config.queryMaxRows,
            timeoutMs: config.queryTimeoutMs,
            staleAfterMs: config.staleAfterMs,
          }),
        ];
  const app = createApp({
    logger,
    authenticate: authMiddleware({ db, masterKey: masterKey.value, now }),
    metrics: createMetricsRegistry(config.role),
    readiness: () => engines.check(),
    routes,
  });
  const server = app.listen(config.port, config.host);
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
    server,
    url,
    async close() {
      const closing = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closing;
      await engines.close();
    },
  };
}
