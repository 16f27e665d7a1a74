import { request } from 'node:http';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { useCairn } from '../support/cairn.ts';
import { expectDocumentedWire, http } from '../support/http.ts';

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The bytes as they crossed the wire, still encoded. */
  body: Buffer;
}

/** A GET that leaves the body as sent: fetch would decode it and hide the encoding. */
function rawGet(base: string, path: string, acceptEncoding?: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, base),
      { headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const answer = {
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
          };
          expectDocumentedWire(base, 'GET', path, { ...answer, bytes: answer.body }).then(
            () => resolve(answer),
            reject,
          );
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const decode = (answer: RawAnswer): Buffer => {
  const encoding = answer.headers['content-encoding'];
  if (encoding === 'br') return zlib.brotliDecompressSync(answer.body);
  if (encoding === 'gzip') return zlib.gunzipSync(answer.body);
  return answer.body;
};

/** What a page loads (scripts, stylesheets, icons), not the pages it links to. */
const refsOf = (html: string) =>
  [...html.matchAll(/<(?:script|link)\b[^>]*\s(?:src|href)="(\/[^"]+)"/g)].map(
    ([, ref]) => ref ?? '',
  );

describe('the /explore and /docs pages and their assets', () => {
  // The contract's anonymous budget: 60 requests a minute.
  const cairn = useCairn({ issueToken: false });

  it('serves /docs from this server, pointed at /openapi.json', async () => {
    const page = await http(cairn.url, 'GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const refs = refsOf(page.text);
    expect(refs.length).toBeGreaterThanOrEqual(3);
    expect(page.text).toContain('<a href="/explore">');
    // No CDN: every script and stylesheet is a path on this server.
    for (const ref of refs) expect(ref).toMatch(/^\/docs\/assets\/[0-9a-f]{16}\/[\w.-]+$/);
    const types: Record<string, RegExp> = {
      js: /javascript/,
      css: /^text\/css/,
      png: /^image\/png/,
    };
    for (const ref of refs) {
      const asset = await http(cairn.url, 'GET', ref);
      expect(asset.status, ref).toBe(200);
      expect(asset.headers.get('content-type'), ref).toMatch(types[ref.split('.').pop()!]!);
    }
    const named = (name: string) => refs.find((ref) => ref.endsWith(`/${name}`))!;
    expect((await http(cairn.url, 'GET', named('cairn-init.js'))).text).toContain(
      "url: '/openapi.json'",
    );
    expect((await http(cairn.url, 'GET', named('swagger-ui-bundle.js'))).text).toContain(
      'SwaggerUIBundle',
    );
  });

  it('serves the explorer page from this server, labelled, under a strict policy', async () => {
    const page = await rawGet(cairn.url, '/explore', 'gzip');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    const html = decode(page).toString('utf8');
    expect(html).toMatch(/<label for="token">Token<\/label>/);
    expect(html).toMatch(/<button type="submit" id="run"[^>]*>Run<\/button>/);
    const refs = refsOf(html);
    expect(refs.length).toBeGreaterThanOrEqual(4);
    for (const ref of refs) expect(ref).toMatch(/^\/explore\/assets\/[0-9a-f]{16}\/[\w.]+$/);
  });

  it('sends each asset compressed as asked, identical once decoded, cacheable for good', async () => {
    const html = (await http(cairn.url, 'GET', '/explore')).text;
    const docs = (await http(cairn.url, 'GET', '/docs')).text;
    for (const ref of [...refsOf(html), ...refsOf(docs)]) {
      const plain = await rawGet(cairn.url, ref);
      expect(plain.status, ref).toBe(200);
      expect(plain.headers['content-encoding'], ref).toBeUndefined();
      expect(plain.headers['cache-control'], ref).toBe('public, max-age=31536000, immutable');
      expect(plain.headers.vary, ref).toBe('Accept-Encoding');
      for (const encoding of ['br', 'gzip']) {
        const packed = await rawGet(cairn.url, ref, `${encoding}, deflate`);
        expect(packed.headers['content-encoding'], ref).toBe(encoding);
        expect(Number(packed.headers['content-length']), ref).toBe(packed.body.length);
        expect(decode(packed).equals(plain.body), ref).toBe(true);
        if (!ref.endsWith('.png')) expect(packed.body.length, ref).toBeLessThan(plain.body.length);
      }
      expect((await rawGet(cairn.url, ref, 'br;q=0, gzip')).headers['content-encoding']).toBe(
        'gzip',
      );
    }
  });

  it('keeps the explorer within 150 KB of JavaScript on the wire, chart library included', async () => {
    const html = (await http(cairn.url, 'GET', '/explore')).text;
    const base = /\/explore\/assets\/[0-9a-f]{16}\//.exec(html)![0];
    // The page's modules import one another: count every script in the bundle, not only the
    // two the page names.
    const scripts = new Set(refsOf(html).filter((ref) => ref.endsWith('.js')));
    for (const ref of [...scripts]) {
      const source = (await http(cairn.url, 'GET', ref)).text;
      for (const [, name] of source.matchAll(/from '\.\/([\w.-]+\.js)'/g))
        scripts.add(`${base}${name}`);
    }
    expect(scripts.size).toBeGreaterThanOrEqual(8);
    let bytes = 0;
    for (const ref of scripts) {
      const answer = await rawGet(cairn.url, ref, 'gzip');
      expect(answer.status, ref).toBe(200);
      bytes += answer.body.length;
    }
    expect(bytes).toBeLessThanOrEqual(150 * 1024);
  });

  it('never charges the pages or their assets to the anonymous rate limit', async () => {
    const html = (await http(cairn.url, 'GET', '/explore')).text;
    const docs = (await http(cairn.url, 'GET', '/docs')).text;
    const paths = ['/explore', '/docs', ...refsOf(html), ...refsOf(docs)];
    // Well past the anonymous 60 a minute: every one is still served and none is counted.
    for (let round = 0; round < 8; round++) {
      for (const path of paths) {
        const res = await rawGet(cairn.url, path, 'gzip');
        expect(res.status, path).toBe(200);
        expect(res.headers['x-ratelimit-limit'], path).toBe('60');
        expect(res.headers['x-ratelimit-remaining'], path).toBe('60');
      }
    }
    const api = await http(cairn.url, 'GET', '/api/v1/tokens/self');
    expect(api.status).toBe(401);
    expect(api.headers.get('x-ratelimit-remaining')).toBe('59');
  });

  it('answers unknown files and stale hashes with a 404 problem', async () => {
    const html = (await http(cairn.url, 'GET', '/explore')).text;
    const main = refsOf(html).find((ref) => ref.endsWith('/main.js'))!;
    for (const path of [
      main.replace(/[0-9a-f]{16}/, '0123456789abcdef'),
      main.replace('main.js', 'index.html'),
      main.replace('main.js', '../main.js'),
      '/explore/assets/main.js',
      // Swagger UI's own page points at a public demo API; only the files /docs uses are served.
      '/docs/assets/index.html',
      '/docs/assets/swagger-ui.css',
      '/docs/assets/0000000000000000/swagger-ui.css',
      '/docs/assets/swagger-initializer.js',
      '/docs/assets/../package.json',
    ]) {
      const res = await http(cairn.url, 'GET', path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toMatch(/^application\/problem\+json/);
    }
  });
});
