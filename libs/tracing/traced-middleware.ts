import { context } from '@opentelemetry/api';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { failSpan, recordingNow, startSpan, tracingOn, withSpan } from './tracing.ts';

/**
 * An express middleware timed as a span of its own (authentication), ended when it hands the
 * request on or answers it. What follows it runs under the request's span again, not under
 * this one. Without tracing the middleware is returned as it is.
 */
export function tracedMiddleware(name: string, handler: RequestHandler): RequestHandler {
  if (!tracingOn()) return handler;
  return (req: Request, res: Response, next: NextFunction) => {
    const span = recordingNow() ? startSpan(name, {}) : undefined;
    if (!span) {
      handler(req, res, next);
      return;
    }
    const outer = context.active();
    let ended = false;
    const end = (error?: unknown) => {
      if (ended) return;
      ended = true;
      if (error !== undefined && error !== 'route' && error !== 'router') failSpan(span, error);
      span.end();
    };
    res.once('close', () => end());
    withSpan(span, () =>
      handler(req, res, (error?: unknown) => {
        end(error);
        context.with(outer, () => next(error));
      }),
    );
  };
}
