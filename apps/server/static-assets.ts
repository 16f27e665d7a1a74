import { createHash } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { NextFunction, Request, Response } from 'express';

/** A file a browser page loads, held in memory: the pages' assets are small and fixed. */
export interface Asset {
  name: string;
  /** Content-Type. */
  type: string;
  body: Buffer;
}

type Encoding = 'br' | 'gzip';
const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/** Hashed URLs never change meaning, so a browser may keep them for a year without asking. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Pages keep fixed URLs: a browser revalidates them, so a new release is seen at once. */
export const REVALIDATE = 'no-cache';

const compressed = new WeakMap<Asset, Map<Encoding, Promise<Buffer>>>();

/**
 * Each encoding is made once, on first demand, off the event loop: compressing Swagger UI's
 * 1.7 MB bundle takes a few hundred milliseconds that no start-up should pay for.
 */
function encode(asset: Asset, encoding: Encoding): Promise<Buffer> {
  let cache = compressed.get(asset);
  if (!cache) {
    cache = new Map();
    compressed.set(asset, cache);
  }
  let pending = cache.get(encoding);
  if (!pending) {
    pending =
      encoding === 'br'
        ? brotli(asset.body, {
            params: {
              [zlib.constants.BROTLI_PARAM_QUALITY]: 8,
              [zlib.constants.BROTLI_PARAM_SIZE_HINT]: asset.body.length,
            },
          })
        : gzip(asset.body, { level: 9 });
    cache.set(encoding, pending);
  }
  return pending;
}

/**
 * Sends an asset in the best encoding the client accepts. Content-Encoding is set here, so a
 * compression middleware further out leaves the body alone.
 */
export async function sendAsset(
  req: Request,
  res: Response,
  asset: Asset,
  cacheControl: string,
): Promise<void> {
  const accepted = req.acceptsEncodings(['br', 'gzip', 'identity']);
  const encoding = accepted === 'br' || accepted === 'gzip' ? accepted : undefined;
  const body = encoding ? await encode(asset, encoding) : asset.body;
  res.setHeader('Content-Type', asset.type);
  res.setHeader('Cache-Control', cacheControl);
  res.setHeader('Vary', 'Accept-Encoding');
  if (encoding) res.setHeader('Content-Encoding', encoding);
  res.setHeader('Content-Length', String(body.length));
  res.status(200).end(req.method === 'HEAD' ? undefined : body);
}

export interface AssetBundle {
  /** `<mount>/<content hash>`: changes whenever any file changes. */
  base: string;
  url(name: string): string;
  /** Serves `<base>/<name>` for GET and HEAD; anything else goes on (to the 404). */
  serve(req: Request, res: Response, next: NextFunction): void;
}

/**
 * Assets under one hashed directory. The hash covers every file, so files may refer to each
 * other by relative URL (ES module imports) and still be cached forever.
 */
export function assetBundle(mount: string, assets: readonly Asset[]): AssetBundle {
  const digest = createHash('sha256');
  for (const asset of assets) digest.update(asset.name).update('\0').update(asset.body);
  const base = `${mount}/${digest.digest('hex').slice(0, 16)}`;
  const byPath = new Map(assets.map((asset) => [`${base}/${asset.name}`, asset]));
  return {
    base,
    url: (name) => {
      if (!byPath.has(`${base}/${name}`)) throw new Error(`no asset named ${name}`);
      return `${base}/${name}`;
    },
    serve(req, res, next) {
      const asset = byPath.get(path.posix.join(req.baseUrl, req.path));
      if (!asset || (req.method !== 'GET' && req.method !== 'HEAD')) return next();
      sendAsset(req, res, asset, IMMUTABLE).catch(next);
    },
  };
}

/** A text asset (a page) from a string. */
export const textAsset = (name: string, type: string, text: string): Asset => ({
  name,
  type,
  body: Buffer.from(text),
});
