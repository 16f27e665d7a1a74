import express, { type Request, type Response } from 'express';
import type { Registry } from 'prom-client';
import type { Logger } from '../../libs/observability/logger.ts';
import { errorMiddleware } from '../../libs/platform/error-middleware.ts';
import { AppError } from '../../libs/platform/errors.ts';
import { jsonBody } from '../../libs/platform/json-body.ts';
import { requestId } from '../../libs/platform/request-id.ts';
import type { Route } from '../../libs/platform/route.ts';
import { mountRoutes, notFound } from '../../libs/platform/router.ts';

export interface AppOptions {
  routes: Route[];
  logger: Logger;
  /** Each engine's state, for /readyz. */
  readiness: () => Promise<Record<string, string>>;
  metrics: Registry;
  /** Runs before body parsing, so an unauthenticated caller cannot make the server read a body. */
  authenticate: express.RequestHandler;
}

export function createApp(options: AppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestId);
  app.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  app.use(options.authenticate);
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
    res.type(options.metrics.contentType).send(await options.metrics.metrics());
  });

  mountRoutes(app, options.routes);
  app.use(notFound(options.routes));
  app.use(errorMiddleware(options.logger));
  return app;
}
