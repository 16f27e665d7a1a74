import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type express from 'express';
import type { Request, Response } from 'express';
import {
  type Asset,
  type AssetBundle,
  assetBundle,
  REVALIDATE,
  sendAsset,
  textAsset,
} from './static-assets.ts';

const PAGE_DIR = path.join(import.meta.dirname, '..', 'explorer');
const UPLOT_DIR = path.dirname(createRequire(import.meta.url).resolve('uplot/dist/uPlot.min.css'));

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

const file = (dir: string, name: string): Asset => ({
  name,
  type: TYPES[path.extname(name)] ?? 'application/octet-stream',
  body: fs.readFileSync(path.join(dir, name)),
});

/** The page's own scripts and styles: every .js and .css file beside its index.html. */
const pageFiles = (): Asset[] =>
  fs
    .readdirSync(PAGE_DIR)
    .filter((name) => TYPES[path.extname(name)] !== undefined)
    .sort()
    .map((name) => file(PAGE_DIR, name));

// The page's own rules, tighter than the API's: scripts, styles and calls only from here.
const PAGE_POLICY = [
  "default-src 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

let bundle: AssetBundle | undefined;
/** The explorer's files, hashed once: the embed page loads its chart and table from them too. */
export function explorerAssets(): AssetBundle {
  bundle ??= assetBundle('/explore/assets', [
    ...pageFiles(),
    file(UPLOT_DIR, 'uPlot.iife.min.js'),
    file(UPLOT_DIR, 'uPlot.min.css'),
  ]);
  return bundle;
}

/**
 * `GET /explore` (and `GET /`, redirected there): the explorer page, and its files under `/explore/assets/<hash>/` (its own
 * ES modules, uPlot from the installed npm package), compressed and cached for good.
 */
export function mountExplorer(app: express.Express): void {
  const assets = explorerAssets();
  const html = fs.readFileSync(path.join(PAGE_DIR, 'index.html'), 'utf8');
  const page = textAsset(
    'index.html',
    'text/html; charset=utf-8',
    html.replaceAll('%BASE%', assets.base),
  );
  app.use('/explore/assets', assets.serve);
  // The root is where a person lands first: the page made for people, not a 404.
  app.get('/', (_req: Request, res: Response) => res.status(302).location('/explore').end());
  app.get('/explore', (req: Request, res: Response) => {
    res.setHeader('Content-Security-Policy', PAGE_POLICY);
    return sendAsset(req, res, page, REVALIDATE);
  });
}
