import type { Request, Response } from 'express';
import { notModified } from './conditional-get.ts';
import type { Execution } from './idempotency-layer.ts';
import type { Route } from './route.ts';

/**
 * Sends what a route came to: its headers (with the route's Cache-Control on a success, which a
 * 304 keeps), `Idempotent-Replayed` on a replay, then a 304 when a GET's ETag matches the
 * caller's If-None-Match, no body for an empty answer, or JSON.
 */
export function sendResult(
  req: Request,
  res: Response,
  route: Route,
  { result, replayed }: Execution,
): void {
  for (const [name, value] of Object.entries(result.headers)) res.setHeader(name, value);
  if (route.cacheControl && result.status < 300) res.setHeader('Cache-Control', route.cacheControl);
  if (replayed) res.setHeader('Idempotent-Replayed', 'true');
  if (
    route.method === 'get' &&
    result.status === 200 &&
    notModified(req.get('if-none-match'), result.headers.ETag)
  ) {
    res.status(304).end();
  } else if (result.body === undefined) res.status(result.status).end();
  else sendJson(res, result.status, result.body);
}

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
