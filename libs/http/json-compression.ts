import compression from 'compression';
import type { Request, Response } from 'express';

const JSON_TYPES = /^application\/(?:[\w.+-]+\+)?json\b/i;

/**
 * gzip or br (as the client's Accept-Encoding prefers) for JSON answers over 1 KiB. Only JSON:
 * static assets arrive already compressed with their own Content-Encoding, and small answers
 * cost more to compress than they save.
 */
export function jsonCompression() {
  return compression({
    // compression skips bodies shorter than the threshold: 1025 compresses those over 1 KiB.
    threshold: 1025,
    filter: (_req: Request, res: Response) =>
      JSON_TYPES.test(String(res.getHeader('Content-Type') ?? '')),
  });
}
