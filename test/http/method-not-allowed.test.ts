import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { useCairn } from '../support/cairn.ts';
import { expectDocumentedWire } from '../support/http.ts';

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown> | undefined;
}

/**
 * node:http rather than fetch, which refuses to send TRACE; the answer is still checked against
 * the server's own document.
 */
function send(base: string, method: string, path: string, headers: Record<string, string> = {}) {
  return new Promise<RawAnswer>((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const bytes = Buffer.concat(chunks);
        const wire = { status: res.statusCode!, headers: res.headers, bytes };
        const text = bytes.toString('utf8');
        const body =
          res.headers['content-type']?.includes('json') && text ? JSON.parse(text) : undefined;
        expectDocumentedWire(base, method, path, wire).then(
          () => resolve({ status: wire.status, headers: res.headers, body }),
          reject,
        );
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const PLATFORM_PATHS = ['/healthz', '/readyz', '/metrics', '/openapi.json', '/docs', '/explore'];
const REFUSED = ['POST', 'PUT', 'PATCH', 'DELETE', 'TRACE', 'OPTIONS'];

/** The methods the document declares under a path, as `Allow` lists them (HEAD beside GET). */
const allowOf = (methods: string[]) => {
  const upper = methods.map((method) => method.toUpperCase());
  if (upper.includes('GET')) upper.push('HEAD');
  const order = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
  return upper.sort((a, b) => order.indexOf(a) - order.indexOf(b)).join(', ');
};

describe('405 with Allow on every route', () => {
  const cairn = useCairn({ businesses: ['acme'] });

  const expect405 = (answer: RawAnswer, path: string, allow: string) => {
    expect(answer.status, path).toBe(405);
    expect(answer.headers['content-type'], path).toMatch(/^application\/problem\+json/);
    expect(answer.headers.allow, path).toBe(allow);
    expect(answer.body, path).toMatchObject({ status: 405, title: 'Method Not Allowed' });
  };

  it('platform routes refuse every other method with 405 and Allow: GET, HEAD', async () => {
    for (const path of PLATFORM_PATHS) {
      for (const method of REFUSED) {
        expect405(await send(cairn.url, method, path), `${method} ${path}`, 'GET, HEAD');
      }
      // HEAD stays allowed wherever GET is.
      expect((await send(cairn.url, 'HEAD', path)).status, `HEAD ${path}`).toBe(200);
    }
  });

  it('the explorer and docs assets refuse other methods too', async () => {
    const html = (await fetch(`${cairn.url}/docs`).then((res) => res.text())) as string;
    const asset = /(\/docs\/assets\/[^"']+)/.exec(html)?.[1];
    expect(asset).toBeDefined();
    expect((await send(cairn.url, 'GET', asset!)).status).toBe(200);
    expect405(await send(cairn.url, 'POST', asset!), asset!, 'GET, HEAD');
    // A method the path takes, on a file that is not there, stays a 404.
    expect((await send(cairn.url, 'GET', '/docs/assets/0000/none.css')).status).toBe(404);
    expect((await send(cairn.url, 'HEAD', '/explore/assets/0000/none.js')).status).toBe(404);
  });

  it('every API path refuses a method it does not take, listing the ones it does', async () => {
    const document = (await fetch(`${cairn.url}/openapi.json`).then((res) => res.json())) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const api = Object.entries(document.paths).filter(([path]) => path.startsWith('/api/'));
    expect(api.length).toBeGreaterThan(5);
    for (const [template, item] of api) {
      const methods = Object.keys(item).filter((key) =>
        ['get', 'put', 'post', 'delete', 'patch'].includes(key),
      );
      // A made-up id that matches no literal path such as /tokens/self.
      const path = template.replace(/\{[^}]+\}/g, 'x1');
      for (const method of ['PATCH', 'TRACE']) {
        expect405(await send(cairn.url, method, path), `${method} ${path}`, allowOf(methods));
      }
    }
  });

  it('/api/v1/tokens/self takes GET only, though /api/v1/tokens/{id} would match it', async () => {
    for (const method of ['OPTIONS', 'DELETE', 'PATCH']) {
      expect405(
        await send(cairn.url, method, '/api/v1/tokens/self', cairn.auth),
        `${method} /api/v1/tokens/self`,
        'GET, HEAD',
      );
    }
    expect405(
      await send(cairn.url, 'OPTIONS', '/api/v1/tokens/tok_0123456789abcdef'),
      'OPTIONS /api/v1/tokens/{id}',
      'DELETE',
    );
  });
});
