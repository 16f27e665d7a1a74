import { SpanStatusCode } from '@opentelemetry/api';
import type { NextFunction, Request, Response } from 'express';
import { templatePattern } from '../http/router.ts';
import { settleRequestSpan, startRequestSpan } from '../tracing/request-span.ts';
import { sampledIds, tracingOn, withSpan } from '../tracing/tracing.ts';
import type { Logger } from './logger.ts';
import { type CairnMetrics, observeWithTrace } from './metrics.ts';

export interface RouteTemplate {
  method: string;
  /** Express path template, e.g. `/api/v1/tasks/:gid`. */
  path: string;
}

/** The label for a path the service does not serve: raw paths would make cardinality unbounded. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Times every request and, once it is answered, records it in `http_request_duration_seconds`
 * and writes one JSON log line. The line names the route template, never the raw URL (query
 * strings and path segments can carry identifiers), and never headers or bodies (tokens, keys).
 */
export function observeRequests(options: {
  metrics: CairnMetrics;
  logger: Logger;
  routes: RouteTemplate[];
}) {
  const label = routeLabeller(options.routes);
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    const held = tracingOn() ? startRequestSpan(req, res) : undefined;
    let done = false;
    const record = () => {
      if (done) return;
      done = true;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = label(req);
      // A client that hung up before the answer was sent: nginx's 499, so it is not a 200.
      const status = res.writableFinished ? res.statusCode : 499;
      const labels = { method: req.method, route, status: String(status) };
      // A span still waiting for the credential check: the request was answered before it.
      const span = held && (held.span ?? settleRequestSpan(req, res, false));
      const ids = sampledIds(span);
      observeWithTrace(options.metrics.httpDuration, labels, seconds, ids);
      if (span) {
        span.updateName(`${req.method} ${route}`);
        span.setAttribute('http.route', route);
        span.setAttribute('http.response.status_code', status);
        if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      }
      const level = status >= 500 ? 'error' : 'info';
      options.logger[level](
        {
          ...ids,
          request_id: req.requestId,
          method: req.method,
          route,
          status,
          duration_ms: Math.round(seconds * 1e6) / 1e3,
        },
        'request',
      );
    };
    // 'close' follows 'finish' on every answered request, and comes alone when the client left.
    res.once('close', record);
    withSpan(held?.span, next);
  };
}

/**
 * Express knows the matched template once routing ran; a request answered earlier (401, 429)
 * is matched against the route table here so it keeps its template too.
 */
function routeLabeller(routes: RouteTemplate[]) {
  const matchers = routes.map((route) => ({
    method: route.method.toUpperCase(),
    path: route.path,
    pattern: templatePattern(route.path),
  }));
  return (req: Request): string => {
    const matched: unknown = req.route?.path;
    if (typeof matched === 'string') return matched;
    // Inside a router mounted with app.use (static assets), req.path lost the mount point.
    const path = `${req.baseUrl}${req.path}`;
    const candidates = matchers.filter((m) => m.pattern.test(path));
    // HEAD is answered by the GET route; a CORS preflight (OPTIONS) belongs to whichever
    // route the path names.
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const hit =
      candidates.find((m) => m.method === method) ??
      (req.method === 'OPTIONS' ? candidates[0] : undefined);
    return hit?.path ?? UNMATCHED_ROUTE;
  };
}
