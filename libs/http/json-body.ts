import express, { type NextFunction, type Request, type Response } from 'express';
import type { Slab, SlabSource } from './body-slabs.ts';
import { AppError } from './errors.ts';
import { collectYoungSoon } from './young-collection.ts';

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
 * Leaves the body's bytes (or `undefined` when there is none) in `req.body`; a large body sent
 * as is, with its length, is read into a slab from `slabs`, which `releaseBody` gives back.
 */
export function jsonBody(slabs: SlabSource) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const { headers } = req;
    if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) {
      // No body at all: what body-parser would conclude, without its checks on every read.
      req.body = undefined;
      next();
      return;
    }
    const hasBody =
      Number(headers['content-length'] ?? 0) > 0 || headers['transfer-encoding'] !== undefined;
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
    const slab = slabFor(req, slabs);
    if (slab) readInto(req, slab, next);
    else
      readBytes(req, res, (error?: unknown) => {
        if (((req.body as Uint8Array | undefined)?.length ?? 0) > SLAB_ABOVE) collectYoungSoon();
        next(error);
      });
  };
}

/**
 * Bodies below this are read as body-parser reads them: a slab would save nothing. Above it, the
 * young generation is collected once the body is in (`collectYoungSoon`).
 */
const SLAB_ABOVE = 65_536;

const held = new WeakMap<Request, Slab>();

/** Gives back the slab a body was read into, if it was; call once the body has been checked. */
export function releaseBody(req: Request): void {
  held.get(req)?.release();
  held.delete(req);
}

function slabFor(req: Request, slabs: SlabSource): Slab | undefined {
  const encoding = (req.get('content-encoding') ?? 'identity').trim().toLowerCase();
  const length = Number(req.get('content-length'));
  if (encoding !== 'identity' || req.get('transfer-encoding') !== undefined) return undefined;
  if (!Number.isSafeInteger(length) || length <= SLAB_ABOVE || length > BODY_LIMIT_BYTES) {
    return undefined;
  }
  return slabs.reserve(length);
}

/** The http-errors shape body-parser throws, so clientError words it the same way. */
const readFailure = (type: string) => Object.assign(new Error(type), { type, status: 400 });

function readInto(req: Request, slab: Slab, next: NextFunction): void {
  let filled = 0;
  let done = false;
  const finish = (error?: Error) => {
    if (done) return;
    done = true;
    // The parser's copies of what was read are garbage now, whether the body is kept or not.
    collectYoungSoon();
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('aborted', onAborted);
    req.off('error', onError);
    req.off('close', onAborted);
    if (error) {
      slab.release();
      // What is left of the body is drained, so the connection can answer the error.
      req.resume();
      next(error);
      return;
    }
    held.set(req, slab);
    req.body = slab.bytes;
    next();
  };
  const onData = (chunk: Buffer) => {
    if (filled + chunk.length > slab.bytes.length) {
      finish(readFailure('request.size.invalid'));
      return;
    }
    slab.bytes.set(chunk, filled);
    filled += chunk.length;
  };
  const onEnd = () =>
    finish(filled === slab.bytes.length ? undefined : readFailure('request.size.invalid'));
  const onAborted = () => finish(readFailure('request.aborted'));
  const onError = (error: Error) => finish(error);
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('aborted', onAborted);
  req.on('error', onError);
  req.on('close', onAborted);
}
