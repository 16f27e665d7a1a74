import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError } from './errors.ts';

export const BODY_LIMIT_BYTES = 1_048_576;

const JSON_TYPES = ['application/json', 'application/*+json'];

// The body is only read here (decompression and size limit as body-parser does them, its errors
// turned into problems by clientError); decoding, parsing and validation are BodyChecks', which
// may do them off the event loop.
const readBytes = express.raw({ limit: BODY_LIMIT_BYTES, type: JSON_TYPES });

/** The `charset` parameter of a Content-Type. */
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

/** The charset a request's body is declared in: UTF-8 unless it says otherwise. */
export function bodyCharset(req: Request): string {
  return CHARSET.exec(req.get('content-type') ?? '')?.[1]?.toLowerCase() ?? 'utf-8';
}

/** Whether the body can be read as JSON text: JSON is Unicode (RFC 8259 §8.1). */
function readableCharset(charset: string): boolean {
  if (!charset.startsWith('utf-')) return false;
  try {
    new TextDecoder(charset);
    return true;
  } catch {
    return false;
  }
}

/**
 * JSON bodies only: a body of another media type or charset is a 415, not silently ignored.
 * Leaves the body's bytes (or `undefined` when there is none) in `req.body`.
 */
export function jsonBody(req: Request, res: Response, next: NextFunction): void {
  const hasBody =
    Number(req.get('content-length') ?? 0) > 0 || req.get('transfer-encoding') !== undefined;
  if (!hasBody) {
    readBytes(req, res, next);
    return;
  }
  if (!req.is(JSON_TYPES)) {
    next(new AppError('unsupported_media_type', 'Send the request body as application/json.'));
    return;
  }
  if (!readableCharset(bodyCharset(req))) {
    next(
      new AppError(
        'unsupported_media_type',
        'The request body charset is not supported; send UTF-8.',
      ),
    );
    return;
  }
  readBytes(req, res, next);
}
