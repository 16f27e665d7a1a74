import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type express from 'express';
import type { Request, Response } from 'express';
import { type Asset, assetBundle, REVALIDATE, sendAsset, textAsset } from './static-assets.ts';

/**
 * Swagger UI from the installed npm package: the docs work offline and load nothing from a CDN.
 * Only its files are served: importing the package would evaluate its 1.5 MB browser bundle in
 * the server's heap, which every full garbage collection then has to mark.
 */
const ASSET_DIR = path.dirname(
  createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'),
);

// A script file rather than an inline <script>, so a strict Content-Security-Policy can still
// allow the page.
const INIT_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    persistAuthorization: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;

const packaged = (name: string, type: string): Asset => ({
  name,
  type,
  body: fs.readFileSync(path.join(ASSET_DIR, name)),
});

/**
 * `GET /docs` (the page) and its assets under `/docs/assets/<hash>/`: only the files the page
 * uses (the package's own index.html points at a public demo API), compressed, cached for good.
 */
export function mountDocs(app: express.Express): void {
  const assets = assetBundle('/docs/assets', [
    packaged('swagger-ui.css', 'text/css; charset=utf-8'),
    packaged('swagger-ui-bundle.js', 'text/javascript; charset=utf-8'),
    packaged('favicon-32x32.png', 'image/png'),
    textAsset('cairn-init.js', 'text/javascript; charset=utf-8', INIT_SCRIPT),
  ]);
  const page = textAsset(
    'docs.html',
    'text/html; charset=utf-8',
    `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Cairn API reference</title>
    <link rel="stylesheet" href="${assets.url('swagger-ui.css')}">
    <link rel="icon" type="image/png" href="${assets.url('favicon-32x32.png')}">
  </head>
  <body>
    <p>
      To run queries and browse dependents in a page: <a href="/explore">the explorer</a>.
    </p>
    <div id="swagger-ui"></div>
    <script src="${assets.url('swagger-ui-bundle.js')}"></script>
    <script src="${assets.url('cairn-init.js')}"></script>
  </body>
</html>
`,
  );
  app.use('/docs/assets', assets.serve);
  app.get('/docs', (req: Request, res: Response) => sendAsset(req, res, page, REVALIDATE));
}
