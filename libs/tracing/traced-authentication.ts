import { context, trace } from '@opentelemetry/api';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { awaitsCaller, settleRequestSpan } from './request-span.ts';
import { failSpan, recordingNow, startSpan, tracingOn, withSpan } from './tracing.ts';

const NAME = 'authenticate';

/**
 * The credential check timed as a span of its own, ended when it hands the request on or
 * answers it; what follows runs under the request's span again, not this one. It is also where
 * a request that came with a `traceparent` gets its span (request-span.ts): only once the check
 * has run is it known whether the caller holds a valid credential (`trusted`) and may carry a
 * sampling decision in. Such a span is dated from the request's arrival, and the check is
 * recorded under it afterwards. Without tracing the handler is returned as it is.
 */
export function tracedAuthentication(
  handler: RequestHandler,
  trusted: (req: Request) => boolean,
): RequestHandler {
  if (!tracingOn()) return handler;
  return (req: Request, res: Response, next: NextFunction) => {
    if (awaitsCaller(req)) {
      checkThenSettle(handler, trusted, req, res, next);
      return;
    }
    const span = recordingNow() ? startSpan(NAME, {}) : undefined;
    if (!span) {
      handler(req, res, next);
      return;
    }
    const outer = context.active();
    let ended = false;
    const end = (error?: unknown) => {
      if (ended) return;
      ended = true;
      if (isFailure(error)) failSpan(span, error);
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

/** Hands on a request that has no credential check (the free paths): its caller is untrusted. */
export function uncheckedCaller(req: Request, res: Response, next: NextFunction): void {
  if (!tracingOn() || !awaitsCaller(req)) {
    next();
    return;
  }
  withSpan(settleRequestSpan(req, res, false), next);
}

function checkThenSettle(
  handler: RequestHandler,
  trusted: (req: Request) => boolean,
  req: Request,
  res: Response,
  next: NextFunction,
): void {
  const started = performance.now();
  handler(req, res, (error?: unknown) => {
    const span = settleRequestSpan(req, res, error === undefined && trusted(req));
    if (span?.isRecording()) {
      const check = startSpan(NAME, { startTime: started }, trace.setSpan(context.active(), span));
      if (isFailure(error)) failSpan(check, error);
      check?.end();
    }
    withSpan(span, () => next(error));
  });
}

/** Express's `next` takes 'route' and 'router' to skip ahead: no failure. */
const isFailure = (error: unknown): boolean =>
  error !== undefined && error !== 'route' && error !== 'router';
