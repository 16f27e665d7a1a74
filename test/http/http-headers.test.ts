import { request } from 'node:http';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { randomSecret } from '../support/auth.ts';
import { useCairn } from '../support/cairn.ts';
import { expectDocumentedWire, http } from '../support/http.ts';

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: Buffer;
}

/**
 * node:http rather than fetch, which would decompress behind the test's back; the answer is
 * still checked against the server's document.
 */
function raw(base: string, method: string, path: string, headers: Record<string, string> = {}) {
  return new Promise<RawAnswer>((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const answer = {
          status: res.statusCode!,
          headers: res.headers,
          bytes: Buffer.concat(chunks),
        };
        expectDocumentedWire(base, method, path, answer).then(() => resolve(answer), reject);
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const DASHBOARD = 'https://dash.example.com';

describe('compression, CORS and the IETF rate-limit fields', () => {
  const cairn = useCairn({
    env: {
      CAIRN_CORS_ORIGINS: `${DASHBOARD}, http://localhost:5173`,
      CAIRN_MASTER_KEY: randomSecret(),
    },
  });

  it('compresses JSON over 1 KiB with gzip or br, as the client accepts', async () => {
    const plain = await raw(cairn.url, 'GET', '/openapi.json');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.bytes.length).toBeGreaterThan(1024);
    const document = JSON.parse(plain.bytes.toString('utf8'));

    const gzip = await raw(cairn.url, 'GET', '/openapi.json', { 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gzip.headers.vary).toContain('Accept-Encoding');
    expect(gzip.bytes.length).toBeLessThan(plain.bytes.length / 3);
    expect(JSON.parse(zlib.gunzipSync(gzip.bytes).toString('utf8'))).toEqual(document);

    const br = await raw(cairn.url, 'GET', '/openapi.json', { 'accept-encoding': 'br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(JSON.parse(zlib.brotliDecompressSync(br.bytes).toString('utf8'))).toEqual(document);

    const either = await raw(cairn.url, 'GET', '/openapi.json', {
      'accept-encoding': 'gzip, deflate, br',
    });
    expect(['gzip', 'br']).toContain(either.headers['content-encoding']);
  });

  it('compresses an API answer and its problem bodies alike, but not small or non-JSON ones', async () => {
    const auth = await cairn.token({ businesses: ['h_one'] });
    for (let n = 0; n < 12; n += 1) {
      await http(cairn.url, 'POST', '/api/v1/tasks', {
        body: { business: 'h_one', name: `a task with a reasonably long name, number ${n}` },
        headers: auth,
      });
    }
    const list = await raw(cairn.url, 'GET', '/api/v1/tasks?business=h_one&per_page=12', {
      ...auth,
      'accept-encoding': 'gzip',
    });
    expect(list.status).toBe(200);
    expect(list.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(zlib.gunzipSync(list.bytes).toString('utf8')).data).toHaveLength(12);

    const small = await raw(cairn.url, 'GET', '/healthz', { 'accept-encoding': 'gzip, br' });
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(small.bytes.toString('utf8')).status).toBe('ok');

    // Static assets come compressed ahead of time; JSON compression must not wrap them again.
    const page = await raw(cairn.url, 'GET', '/docs');
    const asset = /href="(\/docs\/assets\/[^"]+\.css)"/.exec(page.bytes.toString('utf8'))?.[1];
    const css = await raw(cairn.url, 'GET', asset!, { 'accept-encoding': 'gzip' });
    expect(css.status).toBe(200);
    const text = (
      css.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(css.bytes) : css.bytes
    ).toString('utf8');
    expect(text.length).toBeGreaterThan(1024);
    expect(text).toContain('.swagger-ui');
  });

  it('answers a preflight from a listed origin and exposes the contract headers', async () => {
    const preflight = await raw(cairn.url, 'OPTIONS', '/api/v1/query', {
      origin: DASHBOARD,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type, idempotency-key',
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(DASHBOARD);
    expect(preflight.headers['access-control-allow-methods']).toContain('POST');
    const allowed = String(preflight.headers['access-control-allow-headers']).toLowerCase();
    // Retries, and conditional requests: a task's If-Match, a refresh's If-None-Match.
    for (const name of ['idempotency-key', 'if-match', 'if-none-match']) {
      expect(allowed).toContain(name);
    }
    expect(preflight.headers['access-control-allow-credentials']).toBeUndefined();
    expect(preflight.headers['access-control-max-age']).toBe('600');

    const call = await raw(cairn.url, 'GET', '/api/v1/tasks/nope', { origin: DASHBOARD });
    expect(call.status).toBe(401);
    expect(call.headers['access-control-allow-origin']).toBe(DASHBOARD);
    const exposed = String(call.headers['access-control-expose-headers']);
    for (const name of [
      'X-Request-ID',
      'X-RateLimit-Remaining',
      'RateLimit',
      'Retry-After',
      'ETag',
    ])
      expect(exposed).toContain(name);
    expect(call.headers.vary).toContain('Origin');
  });

  it('gives an unlisted origin nothing to work with', async () => {
    const preflight = await raw(cairn.url, 'OPTIONS', '/api/v1/query', {
      origin: 'https://evil.example.net',
      'access-control-request-method': 'POST',
    });
    expect(preflight.status).toBe(405);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    const call = await raw(cairn.url, 'GET', '/healthz', { origin: 'https://evil.example.net' });
    expect(call.status).toBe(200);
    expect(call.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('states the budget in RateLimit-Policy and RateLimit beside X-RateLimit-*', async () => {
    const auth = await cairn.token({ businesses: ['h_one'] });
    const first = await http(cairn.url, 'GET', '/api/v1/tasks/nope', { headers: auth });
    expect(first.headers.get('ratelimit-policy')).toBe('"default";q=1000;w=60');
    const state = /^"default";r=(\d+);t=(\d+)$/.exec(first.headers.get('ratelimit') ?? '');
    expect(state, first.headers.get('ratelimit') ?? 'no RateLimit').not.toBeNull();
    expect(Number(state![1])).toBe(Number(first.headers.get('x-ratelimit-remaining')));
    expect(Number(state![1])).toBe(999);
    const untilReset = Number(first.headers.get('x-ratelimit-reset')) - Date.now() / 1000;
    expect(Number(state![2])).toBeLessThanOrEqual(60);
    expect(Math.abs(Number(state![2]) - untilReset)).toBeLessThanOrEqual(2);

    const anonymous = await http(cairn.url, 'GET', '/api/v1/tasks/nope');
    expect(anonymous.headers.get('ratelimit-policy')).toBe('"default";q=60;w=60');
  });
});

describe('CORS off by default', () => {
  const cairn = useCairn();

  it('answers no origin, and a preflight is just an unsupported method', async () => {
    const preflight = await raw(cairn.url, 'OPTIONS', '/api/v1/query', {
      origin: DASHBOARD,
      'access-control-request-method': 'POST',
    });
    expect(preflight.status).toBe(405);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });
});
