import type express from 'express';
import type { Request, Response } from 'express';
import { authorize } from '../auth/authorize.ts';
import { AppError, gatherIssues, ValidationError } from './errors.ts';
import { type Idempotency, idempotencyKeyOf } from './idempotency.ts';
import type { Route } from './route.ts';
import { validate } from './validation.ts';

/**
 * Mounts declared routes: authorise, validate path, query and body, call the handler (through
 * the Idempotency-Key layer for POST and PUT), send its result. Authorisation comes first so an
 * anonymous caller learns nothing from validation.
 */
export function mountRoutes(app: express.Express, routes: Route[], idempotency: Idempotency): void {
  for (const route of routes) {
    app[route.method](route.path, async (req: Request, res: Response) => {
      authorize(route, req.principal);
      const key = idempotencyKeyOf(req, route);
      let params: unknown = req.params;
      let query: unknown = {};
      let body: unknown;
      const checked: Record<string, unknown> = {};
      const checks = Object.entries(route.checks?.({ params: req.params, query: req.query }) ?? {});
      const issues = gatherIssues([
        () => {
          if (route.params) params = validate(route.params, { ...req.params }, 'path');
        },
        () => {
          if (route.query) query = validate(route.query, { ...req.query }, 'query');
        },
        () => {
          if (route.body) body = validate(route.body, req.body, 'body');
        },
        ...checks.map(([name, check]) => () => {
          checked[name] = (check as () => unknown)();
        }),
      ]);
      if (issues.length > 0) throw new ValidationError(issues);
      const controller = new AbortController();
      const onClose = () => {
        if (!res.writableFinished) controller.abort();
      };
      res.on('close', onClose);
      const { principal } = req;
      const { result, replayed } = await idempotency.execute(
        { route, principal, key, params, query, body },
        (recordResponse) =>
          route.handle({
            params,
            query,
            body,
            checked,
            ctx: { requestId: req.requestId, principal, signal: controller.signal, recordResponse },
          }),
      );
      for (const [name, value] of Object.entries(result.headers)) res.setHeader(name, value);
      if (replayed) res.setHeader('Idempotent-Replayed', 'true');
      if (result.body === undefined) res.status(result.status).end();
      else res.status(result.status).json(result.body);
    });
  }
}

/** Unknown paths get 404, or 405 with `Allow` when the path exists under another method. */
export function notFound(routes: Route[]) {
  const matchers = routes.map((route) => ({ route, pattern: templatePattern(route.path) }));
  return (req: Request): never => {
    const path = req.path;
    const version = /^\/api\/(v\d+)(\/|$)/.exec(path)?.[1];
    if (version && version !== 'v1') {
      throw new AppError(
        'not_found',
        `API version ${version} does not exist; this server speaks v1.`,
      );
    }
    const allowed = matchers
      .filter(({ pattern }) => pattern.test(path))
      .map(({ route }) => route.method.toUpperCase());
    if (allowed.length > 0) {
      throw new AppError('method_not_allowed', `${req.method} is not allowed on ${path}.`, {
        headers: { Allow: [...new Set(allowed)].join(', ') },
      });
    }
    throw new AppError('not_found', `No resource at ${path}.`);
  };
}

/** A route template such as `/api/v1/tasks/:gid` as a pattern over request paths. */
export function templatePattern(template: string): RegExp {
  const source = template
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}/?$`);
}
