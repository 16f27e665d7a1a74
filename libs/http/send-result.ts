import type { Readable } from 'node:stream';
import type { Request, Response } from 'express';
import { notModified } from './conditional-get.ts';
import type { Execution } from './idempotency-layer.ts';
import type { Route } from './route.ts';

/**
 * Sends what a route came to: its headers (with the route's Cache-Control on a success, which a
 * 304 keeps), `Idempotent-Replayed` on a replay, then a 304 when a GET's ETag matches the
 * caller's If-None-Match, no body for an empty answer, a stream as it is read, or JSON.
 */
export async function sendResult(
  req: Request,
  res: Response,
  route: Route,
  { result, replayed }: Execution,
): Promise<void> {
  for (const [name, value] of Object.entries(result.headers)) res.setHeader(name, value);
  if (route.cacheControl && result.status < 300) res.setHeader('Cache-Control', route.cacheControl);
  if (replayed) res.setHeader('Idempotent-Replayed', 'true');
  if (result.stream) await sendStream(res, result.status, result.stream);
  else if (
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

/**
 * Sends a stream with chunked encoding. A failure of the stream while it flows (the engine)
 * rejects; the error middleware then finds the headers sent and destroys the connection, so
 * the transfer ends without its last chunk and no client mistakes it for a whole answer. A
 * caller gone away stops the stream. (`pipe` rather than `pipeline`: a response already has
 * most of its ten `close` listeners, and pipeline's several more set Node warning.)
 */
function sendStream(res: Response, status: number, stream: Readable): Promise<void> {
  res.statusCode = status;
  return new Promise((resolve, reject) => {
    stream.once('error', (error) => {
      stream.unpipe(res);
      reject(error);
    });
    res.once('close', () => {
      if (!res.writableFinished) stream.destroy();
      resolve();
    });
    stream.pipe(res);
  });
}
