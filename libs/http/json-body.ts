import express, { type Request, type Response } from 'express';
import type { Slab, SlabSource } from './body-slabs.ts';
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
 * A request body as read. Whoever awaited `readJsonBody` owns it and calls `release` once the
 * bytes have been checked: a body in a slab lends memory that the next large body reuses, so
 * the call must come after the last read of `bytes` (a worker thread's included) and must come,
 * or the pool is one slab smaller for good.
 */
export interface BodyRead {
  /** The body's bytes; `undefined` when the request had none. */
  bytes: Uint8Array | undefined;
  /** Gives back the slab the bytes lie in, if they do; later calls do nothing. */
  release(): void;
}

/** What the kernel tells whoever plugs into it while it reads a body. */
export interface BodyReadHooks {
  /**
   * A body over 64 KiB has just been read (or its read failed part way): the HTTP parser's
   * copies of its socket reads are garbage now. The kernel does nothing with this itself.
   */
  onLargeBody?: () => void;
}

/** Bodies below this are read as body-parser reads them: a slab would save nothing. */
const SLAB_ABOVE = 65_536;

const NOTHING_HELD = () => {};

/**
 * Reads a JSON body. JSON only: a body of another media type or charset is a 415, not silently
 * ignored. A large body sent as is, with its length, is read into a slab from `slabs`; any
 * other is read as body-parser reads it and holds no slab. Rejects with what body-parser would
 * throw (size, aborted, encoding), which clientError words as problems.
 */
export function readJsonBody(
  req: Request,
  res: Response,
  slabs: SlabSource,
  hooks: BodyReadHooks = {},
): Promise<BodyRead> {
  const { headers } = req;
  if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) {
    // No body at all: what body-parser would conclude, without its checks on every read.
    return Promise.resolve({ bytes: undefined, release: NOTHING_HELD });
  }
  return new Promise((resolve, reject) => {
    const settle = (error?: unknown) => {
      if (error) reject(error);
      else resolve({ bytes: req.body as Uint8Array | undefined, release: NOTHING_HELD });
    };
    const hasBody =
      Number(headers['content-length'] ?? 0) > 0 || headers['transfer-encoding'] !== undefined;
    if (!hasBody) {
      readBytes(req, res, settle);
      return;
    }
    if (!req.is(JSON_TYPES)) {
      reject(new AppError('unsupported_media_type', 'Send the request body as application/json.'));
      return;
    }
    if (!readableCharset(bodyCharset(req))) {
      reject(
        new AppError(
          'unsupported_media_type',
          'The request body charset is not supported; send UTF-8.',
        ),
      );
      return;
    }
    const slab = slabFor(req, slabs);
    if (slab) {
      readInto(req, slab, hooks).then(resolve, reject);
      return;
    }
    readBytes(req, res, (error?: unknown) => {
      if (((req.body as Uint8Array | undefined)?.length ?? 0) > SLAB_ABOVE) hooks.onLargeBody?.();
      settle(error);
    });
  });
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

/** Fills `slab` from the request; on failure the slab is given back here, never to the caller. */
function readInto(req: Request, slab: Slab, hooks: BodyReadHooks): Promise<BodyRead> {
  return new Promise((resolve, reject) => {
    let filled = 0;
    let done = false;
    const finish = (error?: Error) => {
      if (done) return;
      done = true;
      hooks.onLargeBody?.();
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAborted);
      req.off('error', onError);
      req.off('close', onAborted);
      if (error) {
        slab.release();
        // What is left of the body is drained, so the connection can answer the error.
        req.resume();
        reject(error);
        return;
      }
      resolve(slab);
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
  });
}
