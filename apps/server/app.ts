import express, { type Request, type Response } from 'express';
import type { Logger } from '../../libs/observability/logger.ts';
import type { CairnMetrics } from '../../libs/observability/metrics.ts';
import { observeRequests } from '../../libs/observability/request-observer.ts';
import { errorMiddleware } from '../../libs/platform/error-middleware.ts';
import { AppError } from '../../libs/platform/errors.ts';
import type { Idempotency } from '../../libs/platform/idempotency.ts';
import { jsonBody } from '../../libs/platform/json-body.ts';
import { buildOpenApi } from '../../libs/platform/openapi.ts';
import type { RateLimiter } from '../../libs/platform/rate-limit.ts';
import { rateLimitMiddleware } from '../../libs/platform/rate-limit-middleware.ts';
import { requestId } from '../../libs/platform/request-id.ts';
import type { Route } from '../../libs/platform/route.ts';
import { mountRoutes, notFound } from '../../libs/platform/router.ts';
import { mountDocs } from './docs.ts';

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
  /** Idempotency-Key handling for POST and PUT routes. */
  idempotency: Idempotency;
}

export function createApp(options: AppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestId);
  // Before anything that can answer (auth, rate limits), so every response is timed and logged.
  app.use(observeRequests(options));
  app.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Referrer-Policy', 'no-referrer');
    // Nothing here is meant to be framed (clickjacking); frame-ancestors alone leaves the
    // same-origin scripts of /docs alone.
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Content-Security-Policy', "frame-ancestors 'none'");
    next();
  });
  const rateLimit = rateLimitMiddleware(options.rateLimiter);
  app.use(options.authenticate);
  app.use(rateLimit.afterAuthFailure);
  app.use(rateLimit.limit);
  app.use(jsonBody);

  app.get('/healthz', (req: Request, res: Response) => {
    res.json({ status: 'ok', request_id: req.requestId });
  });
  app.get('/readyz', async (req: Request, res: Response) => {
    const checks = await options.readiness();
    const ready = Object.values(checks).every((state) => state === 'ok');
    if (!ready) {
      throw new AppError('unavailable', 'One or more engines are not answering.', {
        members: { checks },
      });
    }
    res.json({ status: 'ready', checks, request_id: req.requestId });
  });

  app.get('/metrics', async (_req: Request, res: Response) => {
    const { registry } = options.metrics;
    res.type(registry.contentType).send(await registry.metrics());
  });

  // Built once from the same route table that is mounted below.
  const openapi = buildOpenApi(options.routes);
  app.get('/openapi.json', (_req: Request, res: Response) => {
    res.json(openapi);
  });
  mountDocs(app);

  mountRoutes(app, options.routes, options.idempotency);
  app.use(notFound(options.routes));
  app.use(errorMiddleware(options.logger));
  return app;
}
