import compression from 'compression';
import type { NextFunction, Request, Response } from 'express';

const JSON_TYPES = /^application\/(?:[\w.+-]+\+)?json\b/i;

/**
 * gzip or br (as the client's Accept-Encoding prefers) for JSON answers over 1 KiB. Only JSON:
 * static assets arrive already compressed with their own Content-Encoding, and small answers
 * cost more to compress than they save.
 */
export function jsonCompression() {
  const compress = compression({
    // compression skips bodies shorter than the threshold: 1025 compresses those over 1 KiB.
    threshold: 1025,
    filter: (_req: Request, res: Response) =>
      JSON_TYPES.test(String(res.getHeader('Content-Type') ?? '')),
  });
  return (req: Request, res: Response, next: NextFunction): void => {
    // A client that accepts no encoding gets the answer as it is: no need to wrap this response
    // (the middleware's per-request cost), though caches must still know it varies with the header.
    if (req.headers['accept-encoding'] === undefined) {
      res.setHeader('Vary', 'Accept-Encoding');
      next();
      return;
    }
    compress(req, res, next);
  };
}
