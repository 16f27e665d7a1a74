import type express from 'express';
import type { NextFunction, Request, Response } from 'express';
import type { BodyOutcome } from './body-check.ts';
import type { BodyChecks } from './body-checks.ts';
import { NOT_JSON } from './client-errors.ts';
import { notModified } from './conditional-get.ts';
import { AppError, gatherIssues, ValidationError } from './errors.ts';
import {
  finalize,
  type IdempotencyLayer,
  idempotencyKeyOf,
  NO_IDEMPOTENCY,
} from './idempotency-layer.ts';
import { bodyCharset, jsonBody, releaseBody } from './json-body.ts';
import type { PrincipalOf, Route, TransactionOf } from './route.ts';
import { allowHeader, mostSpecific, shadowingTemplates } from './route-precedence.ts';
import { NO_UNIT, type Transactor } from './unit-of-work.ts';
import { prepare, validate } from './validation.ts';

export interface RouterOptions {
  /** Throws (401/403) unless the principal may call the route; runs before the body is read. */
  authorize: (route: Route, principal: PrincipalOf) => void;
  /** Opens the unit of work of a `write: true` route. */
  transact: Transactor<TransactionOf>;
  /** The Idempotency-Key layer for POST and PUT; none by default. */
  idempotency?: IdempotencyLayer;
  /** Parses and validates request bodies, large ones off the event loop. */
  bodyChecks: BodyChecks;
}

/**
 * Mounts declared routes: authorise, read the body, parse and validate it (BodyChecks), validate
 * path and query, call the handler (through the Idempotency-Key layer for POST and PUT, inside a unit of work for a
 * write), send its result. Authorisation comes first, before a byte of the body is read, so a
 * caller without the right token costs nothing and learns nothing from parsing or validation.
 */
export function mountRoutes(
  app: express.Express,
  routes: Route[],
  { authorize, transact, idempotency = NO_IDEMPOTENCY, bodyChecks }: RouterOptions,
): void {
  const readBody = jsonBody(bodyChecks);
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
    app[route.method](route.path, ...guards, readBody, async (req: Request, res: Response) => {
      const bytes = req.body as Uint8Array | undefined;
      // Most reads carry no body and their route takes none: nothing to parse or check.
      const read: BodyOutcome =
        bytes === undefined && !route.body
          ? NO_BODY
          : await bodyChecks
              .check(route, { bytes, charset: bodyCharset(req) })
              .finally(() => releaseBody(req));
      if (read.kind === 'malformed') throw new AppError('bad_request', NOT_JSON);
      const key = idempotencyKeyOf(req, route);
      // Express parses the query string again on every read of req.query.
      const rawQuery = req.query;
      let params: unknown = req.params;
      let query: unknown = {};
      let body: unknown;
      const checked: Record<string, unknown> = {};
      const checks = Object.entries(route.checks?.({ params: req.params, query: rawQuery }) ?? {});
      const issues = gatherIssues([
        () => {
          if (route.params) params = validate(route.params, { ...req.params }, 'path');
        },
        () => {
          if (route.query) query = validate(route.query, { ...rawQuery }, 'query');
        },
        () => {
          if (route.body && read.kind === 'invalid') throw new ValidationError(read.issues);
          if (route.body && read.kind === 'valid') body = read.value;
        },
        ...checks.map(([name, check]) => () => {
          checked[name] = (check as () => unknown)();
        }),
      ]);
      if (issues.length > 0) throw new ValidationError(issues);
      const { principal } = req;
      let signal: AbortSignal | undefined;
      const ctx = {
        requestId: req.requestId,
        principal,
        get signal() {
          signal ??= abortOnClose(res);
          return signal;
        },
        headers: req.headers,
      };
      const answerRead = async () =>
        finalize(route, await route.handle({ params, query, body, checked, ctx, uow: NO_UNIT }));
      // A read without an Idempotency-Key has nothing to record or replay.
      const { result, replayed } =
        key === undefined && !route.write
          ? { result: await answerRead(), replayed: false }
          : await idempotency.execute(
              { route, principal, key, params, query, body, requestId: req.requestId },
              async (record) => {
                if (!route.write) {
                  const sent = await answerRead();
                  await record?.(undefined, sent);
                  return sent;
                }
                return transact(async (uow) => {
                  const sent = finalize(
                    route,
                    await route.handle({ params, query, body, checked, ctx, uow }),
                  );
                  await record?.(uow.trx, sent);
                  return sent;
                });
              },
            );
      for (const [name, value] of Object.entries(result.headers)) res.setHeader(name, value);
      if (replayed) res.setHeader('Idempotent-Replayed', 'true');
      if (
        route.method === 'get' &&
        result.status === 200 &&
        notModified(req.get('if-none-match'), result.headers.ETag)
      ) {
        res.status(304).end();
      } else if (result.body === undefined) res.status(result.status).end();
      else sendJson(res, result.status, result.body);
    });
  }
}

/**
 * A signal that aborts when the client goes away before its answer is sent. Made on first use:
 * most handlers never look at it, and a controller and a close listener on every request showed
 * in the page's CPU profile.
 */
function abortOnClose(res: Response): AbortSignal {
  const controller = new AbortController();
  if (res.closed) {
    if (!res.writableFinished) controller.abort();
  } else {
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
    });
  }
  return controller.signal;
}

const NO_BODY: BodyOutcome = { kind: 'valid', value: undefined };

/**
 * Writes a JSON answer directly: Express's `res.json` would also copy the text into a Buffer,
 * parse the Content-Type to add a charset and check freshness, none of which an API answer needs.
 */
function sendJson(res: Response, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
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
