import type express from 'express';
import type { NextFunction, Request, Response } from 'express';
import type { BodyChecks } from './body-check-pool.ts';
import { AppError } from './errors.ts';
import { type IdempotencyLayer, NO_IDEMPOTENCY } from './idempotency-layer.ts';
import { readInput } from './read-input.ts';
import { requestContext } from './request-context.ts';
import type { PrincipalOf, Route, TransactionOf } from './route.ts';
import { allowHeader, mostSpecific, shadowingTemplates } from './route-precedence.ts';
import { runRoute } from './run-route.ts';
import { sendResult } from './send-result.ts';
import type { Transactor } from './unit-of-work.ts';
import { prepare } from './validation.ts';

export interface RouterOptions {
  /** Throws (401/403) unless the principal may call the route; runs before the body is read. */
  authorize: (route: Route, principal: PrincipalOf) => void;
  /** Opens the unit of work of a `write: true` route. */
  transact: Transactor<TransactionOf>;
  /** The Idempotency-Key layer for POST and PUT; none by default. */
  idempotency?: IdempotencyLayer;
  /** Parses and validates request bodies, large ones off the event loop. */
  bodyChecks: BodyChecks;
  /** Called once a body over 64 KiB has been read (json-body.ts); nothing by default. */
  onLargeBody?: () => void;
  /**
   * Charges `units` more to the caller's rate-limit budget for a route whose `cost` is above
   * one, throwing (429) when they do not fit; nothing is charged without it.
   */
  chargeMore?: (req: Request, res: Response, units: number) => Promise<void>;
}

/**
 * Mounts declared routes. Each request goes through three stages: read its input (the body,
 * parsed and validated by BodyChecks, then path, query and the route's checks: read-input.ts),
 * run the route by its strategy (run-route.ts: a plain read, a keyed read through the
 * Idempotency-Key layer, a write in a unit of work) and send the result (send-result.ts).
 * Authorisation comes first, before a byte of the body is read, so a caller without the right
 * token costs nothing and learns nothing from parsing or validation.
 */
export function mountRoutes(
  app: express.Express,
  routes: Route[],
  {
    authorize,
    transact,
    idempotency = NO_IDEMPOTENCY,
    bodyChecks,
    onLargeBody,
    chargeMore,
  }: RouterOptions,
): void {
  const reading = { bodyChecks, hooks: { onLargeBody } };
  const running = { transact, idempotency };
  const templates = routes.map((route) => route.path);
  for (const route of routes) {
    for (const schema of [route.params, route.query, route.body]) if (schema) prepare(schema);
    const authorizeFirst = (req: Request, _res: Response, next: NextFunction) => {
      authorize(route, req.principal);
      next();
    };
    // A path of a more specific template is not this route's, whatever its method.
    const shadows = shadowingTemplates(route.path, templates).map(templatePattern);
    const ownPath = (req: Request, _res: Response, next: NextFunction) => {
      next(shadows.some((pattern) => pattern.test(req.path)) ? 'route' : undefined);
    };
    const guards = shadows.length > 0 ? [ownPath, authorizeFirst] : [authorizeFirst];
    app[route.method](route.path, ...guards, async (req: Request, res: Response) => {
      const input = await readInput(req, res, route, reading);
      const extra = (route.cost?.(input.body) ?? 1) - 1;
      if (extra > 0) await chargeMore?.(req, res, extra);
      const execution = await runRoute(route, input, requestContext(req, res), running);
      await sendResult(req, res, route, execution);
    });
  }
}

/** A method and path template, of the route table or of what the app serves itself. */
export type RouteTemplate = Pick<Route, 'path'> & { method: string };

/**
 * Unknown paths get 404, or 405 with `Allow` when the path exists under another method. Only
 * the most specific templates matching a path speak for it (route-precedence.ts).
 */
export function notFound(routes: readonly RouteTemplate[]) {
  const matchers = routes.map((route) => ({
    path: route.path,
    method: route.method,
    pattern: templatePattern(route.path),
  }));
  return (req: Request): never => {
    const path = req.path;
    const version = /^\/api\/(v\d+)(\/|$)/.exec(path)?.[1];
    if (version && version !== 'v1') {
      throw new AppError(
        'not_found',
        `API version ${version} does not exist; this server speaks v1.`,
      );
    }
    const allowed = allowHeader(
      mostSpecific(matchers.filter(({ pattern }) => pattern.test(path))).map(
        (route) => route.method,
      ),
    );
    // A method the path takes that still got here found nothing (an unknown asset, say).
    if (allowed.length > 0 && !allowed.includes(req.method)) {
      throw new AppError('method_not_allowed', `${req.method} is not allowed on ${path}.`, {
        headers: { Allow: allowed.join(', ') },
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
