import cors from 'cors';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** Request headers a browser client may send; everything else in the contract is a simple header. */
const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'X-Request-ID',
  'Cache-Control',
  // Conditional requests: a task's If-Match, a refresh's If-None-Match.
  'If-Match',
  'If-None-Match',
  // W3C trace context: a browser's trace continues into the service.
  'traceparent',
  'tracestate',
];
/** Response headers a browser client may read besides the CORS-safelisted ones. */
const EXPOSED_HEADERS = [
  'X-Request-ID',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Idempotent-Replayed',
  'Original-Request-ID',
  'Location',
  'ETag',
  'traceparent',
];

/**
 * CORS for the listed origins only (`*`: any). Requests from any other origin, and every
 * request when the list is empty, pass untouched, so a preflight from an unlisted origin gets
 * the same 404/405 as without CORS and the browser refuses the call. Mounted before
 * authentication: a preflight carries no token. No credentials: the API uses bearer tokens,
 * never cookies.
 */
export function crossOrigin(origins: readonly string[]): RequestHandler {
  if (origins.length === 0) return (_req, _res, next) => next();
  const any = origins.includes('*');
  const listed = new Set(origins);
  const handler = cors({
    origin: true,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  });
  return (req: Request, res: Response, next: NextFunction) => {
    // The answer differs by Origin, so shared caches must key on it.
    res.vary('Origin');
    const origin = req.headers.origin;
    if (origin !== undefined && (any || listed.has(origin))) handler(req, res, next);
    else next();
  };
}
