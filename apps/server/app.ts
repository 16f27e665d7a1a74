import express, { type Request, type Response } from 'express';
import { holdsCredential } from '../../libs/auth/principal.ts';
import { crossOrigin } from '../../libs/http/cross-origin.ts';
import { errorMiddleware } from '../../libs/http/error-middleware.ts';
import { AppError } from '../../libs/http/errors.ts';
import { jsonCompression } from '../../libs/http/json-compression.ts';
import { buildOpenApi } from '../../libs/http/openapi.ts';
import { requestId } from '../../libs/http/request-id.ts';
import type { Route } from '../../libs/http/route.ts';
import { mountRoutes, notFound, type RouterOptions } from '../../libs/http/router.ts';
import { cutStalledResponses } from '../../libs/http/stalled-responses.ts';
import type { Logger } from '../../libs/observability/logger.ts';
import type { CairnMetrics } from '../../libs/observability/metrics.ts';
import { exposeMetrics } from '../../libs/observability/metrics-exposition.ts';
import { observeRequests } from '../../libs/observability/request-observer.ts';
import { rateLimitMiddleware } from '../../libs/rate-limit/rate-limit.middleware.ts';
import type { RateLimiter } from '../../libs/rate-limit/rate-limit.ts';
import { isUncharged } from '../../libs/rate-limit/uncharged-paths.ts';
import { classifyClickHouseError } from '../../libs/storage/clickhouse-errors.ts';
import { classifyPostgresError } from '../../libs/storage/postgres-errors.ts';
import {
  STORAGE_FAULT_RETRY_AFTER_SECONDS,
  type StorageFault,
} from '../../libs/storage/storage-faults.ts';
import type { WriteHealth } from '../../libs/storage/write-health.ts';
import { tracedAuthentication, uncheckedCaller } from '../../libs/tracing/traced-authentication.ts';
import { mountDocs } from './docs.ts';
import { mountExplorer } from './explore.ts';

export interface AppOptions {
  routes: Route[];
  logger: Logger;
  /** Each engine's state, for /readyz. */
  readiness: () => Promise<Record<string, string>>;
  metrics: CairnMetrics;
  /** Runs before body parsing, so an unauthenticated caller cannot make the server read a body. */
  authenticate: express.RequestHandler;
  /** Charged right after authentication, before the body is read. */
  rateLimiter: RateLimiter;
  /** Authorisation, units of work and Idempotency-Key handling for the route table. */
  router: RouterOptions;
  /** Origins allowed to call the API from a browser (config.corsOrigins). */
  corsOrigins: readonly string[];
  /** Whether Postgres takes writes: storage faults seen by the error middleware set it. */
  writeHealth?: WriteHealth;
  /** A response whose reader takes nothing for this long is cut (config.sendIdleTimeoutMs). */
  sendIdleTimeoutMs: number;
}

/** Why /readyz says not ready while writes to Postgres fail. */
const WRITE_FAULTS: Record<StorageFault, string> = {
  storage_full: 'its storage is full',
  storage_read_only: 'it takes no writes (read-only storage or transactions)',
  out_of_memory: 'it is out of memory',
};

/** What the app serves besides the API's route table, so metrics label those requests too. */
const PLATFORM_ROUTES = [
  '/',
  '/healthz',
  '/readyz',
  '/metrics',
  '/openapi.json',
  '/docs',
  '/docs/assets/:bundle/:file',
  '/explore',
  '/explore/assets/:bundle/:file',
].map((path) => ({ method: 'GET', path }));

export function createApp(options: AppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestId);
  app.use(cutStalledResponses(options.sendIdleTimeoutMs, () => options.metrics.responsesCut.inc()));
  // Before anything that can answer (auth, rate limits), so every response is timed and logged.
  app.use(observeRequests({ ...options, routes: [...options.routes, ...PLATFORM_ROUTES] }));
  app.use((req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Referrer-Policy', 'no-referrer');
    // Nothing here is meant to be framed (clickjacking); frame-ancestors alone leaves the
    // same-origin scripts of /docs alone. The one exception, an embed's chart page, states
    // its own frame-ancestors (its allowed_origins), which X-Frame-Options cannot express.
    if (!req.path.startsWith('/embed/')) res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Content-Security-Policy', "frame-ancestors 'none'");
    next();
  });
  app.use(jsonCompression());
  app.use(crossOrigin(options.corsOrigins));
  const rateLimit = rateLimitMiddleware(options.rateLimiter, () =>
    options.metrics.rateLimitRejections.inc(),
  );
  // Only a caller with a valid credential may carry a sampled `traceparent` in.
  const authenticate = tracedAuthentication(options.authenticate, (req) =>
    holdsCredential(req.principal),
  );
  // Free paths are served to anyone and never look a token up (see uncharged-paths.ts).
  app.use((req, res, next) => {
    if (!isUncharged(req.path)) return authenticate(req, res, next);
    req.principal = { kind: 'anonymous' };
    uncheckedCaller(req, res, next);
  });
  app.use(rateLimit.afterAuthFailure);
  app.use(rateLimit.limit);

  // The route table first: Express tries layers in order, and API calls are most of the traffic.
  mountRoutes(app, options.routes, { ...options.router, chargeMore: rateLimit.chargeMore });
  app.get('/healthz', (req: Request, res: Response) => {
    res.json({ status: 'ok', request_id: req.requestId });
  });
  app.get('/readyz', async (req: Request, res: Response) => {
    const [engines, writes] = await Promise.all([
      options.readiness(),
      options.writeHealth?.check() ?? ('ok' as const),
    ]);
    const checks: Record<string, string> = {
      ...engines,
      ...(writes === 'ok' ? {} : { postgres_writes: writes }),
    };
    if (writes !== 'ok') {
      throw new AppError(writes, `Writes to the database fail: ${WRITE_FAULTS[writes]}.`, {
        headers: { 'Retry-After': String(STORAGE_FAULT_RETRY_AFTER_SECONDS[writes]) },
        members: { checks },
      });
    }
    const ready = Object.values(checks).every((state) => state === 'ok');
    if (!ready) {
      throw new AppError('unavailable', 'One or more engines are not answering.', {
        members: { checks },
      });
    }
    res.json({ status: 'ready', checks, request_id: req.requestId });
  });

  app.get('/metrics', async (req: Request, res: Response) => {
    const { contentType, body } = await exposeMetrics(options.metrics.registry, req.headers.accept);
    res.type(contentType).send(body);
  });

  // Built once from the same route table that is mounted above.
  const openapi = buildOpenApi(options.routes);
  // Where in-process callers (the test harness) read the very document this app serves.
  app.locals.openapi = openapi;
  app.get('/openapi.json', (_req: Request, res: Response) => {
    res.json(openapi);
  });
  mountDocs(app);
  mountExplorer(app);

  // Platform paths too: any other method on them is a 405 naming GET and HEAD.
  app.use(notFound([...options.routes, ...PLATFORM_ROUTES]));
  const postgresErrors =
    options.writeHealth?.watching(classifyPostgresError) ?? classifyPostgresError;
  app.use(errorMiddleware(options.logger, [postgresErrors, classifyClickHouseError]));
  return app;
}
