import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  trace,
} from '@opentelemetry/api';
import type { Request, Response } from 'express';
import { trustedParent } from './caller-sampler.ts';
import { SpanKind, startSpan } from './tracing.ts';

/** A request's server span, as the request observer holds it until the answer is recorded. */
export interface RequestSpan {
  /** Undefined while the caller's `traceparent` waits for the credential check. */
  span: Span | undefined;
}

interface Waiting {
  held: RequestSpan;
  parent: Context;
  /** `performance.now()` at arrival: the span is dated from there. */
  arrived: number;
}

/** Requests whose `traceparent` waits for the credential check before their span starts. */
const waiting = new WeakMap<Request, Waiting>();

/**
 * The request's server span, child of the caller's `traceparent` when it sent a valid one, and
 * announced in the response's own `traceparent` so a client can find its trace. Without a
 * `traceparent` the span (a new trace) starts at once. With one it waits for the credential
 * check (`settleRequestSpan`): only a caller with a valid credential may carry a sampling
 * decision in, and the span's decision is taken when it starts.
 */
export function startRequestSpan(req: Request, res: Response): RequestSpan {
  const parent = propagation.extract(ROOT_CONTEXT, req.headers);
  if (trace.getSpanContext(parent) === undefined) return { span: begin(req, res, ROOT_CONTEXT) };
  const held: RequestSpan = { span: undefined };
  waiting.set(req, { held, parent, arrived: performance.now() });
  return held;
}

/** Whether the request's span waits for its credential check. */
export function awaitsCaller(req: Request): boolean {
  return waiting.has(req);
}

/**
 * Starts the span of a request whose `traceparent` waited, now that its caller is known: with
 * `trusted` (a valid token or the master key) the caller's sampled flag counts; otherwise the
 * request is sampled as one without parent would be (caller-sampler.ts), keeping the caller's
 * trace id. Undefined when the request was not waiting. A request answered before its check (a
 * preflight) gets its span when it is recorded, with no `traceparent` in its answer.
 */
export function settleRequestSpan(req: Request, res: Response, trusted: boolean): Span | undefined {
  const entry = waiting.get(req);
  if (!entry) return undefined;
  waiting.delete(req);
  const parent = trusted ? trustedParent(entry.parent) : entry.parent;
  entry.held.span = begin(req, res, parent, entry.arrived);
  return entry.held.span;
}

function begin(req: Request, res: Response, parent: Context, startTime?: number): Span | undefined {
  const span = startSpan(
    req.method,
    {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': req.method,
        ...(req.requestId ? { 'cairn.request_id': req.requestId } : {}),
      },
      ...(startTime === undefined ? {} : { startTime }),
    },
    parent,
  );
  if (!span || res.headersSent) return span;
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(context.active(), span), carrier);
  if (carrier.traceparent) res.setHeader('traceparent', carrier.traceparent);
  return span;
}
