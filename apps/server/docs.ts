import path from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import swaggerUi from 'swagger-ui-dist';

/** Swagger UI from the installed npm package: the docs work offline and load nothing from a CDN. */
const ASSET_DIR = swaggerUi.getAbsoluteFSPath();
const ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png']);

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

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Cairn API reference</title>
    <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
    <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/assets/swagger-ui-bundle.js"></script>
    <script src="/docs/assets/cairn-init.js"></script>
  </body>
</html>
`;

/** `GET /docs` (the page) and `/docs/assets/*` (Swagger UI's files plus our initialiser). */
export function mountDocs(app: express.Express): void {
  const files = express.static(ASSET_DIR, { index: false, fallthrough: false, maxAge: '1h' });
  app.use('/docs/assets', (req: Request, res: Response, next: NextFunction) => {
    const name = path.posix.basename(req.path);
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    if (name === 'cairn-init.js') {
      res.type('text/javascript').send(INIT_SCRIPT);
      return;
    }
    // Only the files the page uses: the package's own index.html points at a public demo API.
    if (req.path !== `/${name}` || !ASSETS.has(name)) return next();
    files(req, res, next);
  });
  app.get('/docs', (_req: Request, res: Response) => {
    res.type('html').send(PAGE);
  });
}
