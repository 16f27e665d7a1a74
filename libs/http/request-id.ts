import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

declare global {
  namespace Express {
    interface Request {
      requestId: string;
    }
  }
}

/** Echoes a caller's UUID v4 `X-Request-ID`; anything else is replaced, never reflected. */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  const sent = req.headers['x-request-id'];
  req.requestId =
    typeof sent === 'string' && UUID_V4.test(sent) ? sent.toLowerCase() : randomUUID();
  res.setHeader('X-Request-ID', req.requestId);
  next();
}
