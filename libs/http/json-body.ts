import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError } from './errors.ts';

export const BODY_LIMIT_BYTES = 1_048_576;

const parseJson = express.json({
  limit: BODY_LIMIT_BYTES,
  // Any JSON value is parsed; a body that is valid JSON but not an object (`null`, `5`) is then
  // the schema's 422, not a 400 that calls valid JSON malformed.
  strict: false,
  type: ['application/json', 'application/*+json'],
});

/** JSON bodies only: a body of another media type is a 415, not silently ignored. */
export function jsonBody(req: Request, res: Response, next: NextFunction): void {
  const hasBody =
    Number(req.get('content-length') ?? 0) > 0 || req.get('transfer-encoding') !== undefined;
  if (hasBody && !req.is(['application/json', 'application/*+json'])) {
    next(new AppError('unsupported_media_type', 'Send the request body as application/json.'));
    return;
  }
  parseJson(req, res, next);
}
