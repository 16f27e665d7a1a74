import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../apps/server/cairn.ts';
import { type TestConfig, testConfig } from './support/engines.ts';
import { http } from './support/http.ts';

describe('GET /docs', () => {
  let setup: TestConfig;
  let cairn: Cairn;
  beforeAll(async () => {
    setup = await testConfig();
    cairn = await startCairn({ config: setup.config });
  });
  afterAll(async () => {
    await cairn.close();
    await setup.cleanup();
  });

  it('serves a page whose every asset comes from this server, pointed at /openapi.json', async () => {
    const page = await http(cairn.url, 'GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const refs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map(([, ref]) => ref ?? '');
    expect(refs.length).toBeGreaterThanOrEqual(3);
    // No CDN: every script and stylesheet is a path on this server.
    for (const ref of refs) expect(ref).toMatch(/^\/docs\/assets\//);

    const types: Record<string, RegExp> = {
      js: /javascript/,
      css: /^text\/css/,
      png: /^image\/png/,
    };
    for (const ref of refs) {
      const asset = await http(cairn.url, 'GET', ref);
      expect(asset.status, ref).toBe(200);
      expect(asset.headers.get('content-type'), ref).toMatch(types[ref.split('.').pop()!]!);
      expect(asset.text.length, ref).toBeGreaterThan(0);
    }
    const init = await http(cairn.url, 'GET', '/docs/assets/cairn-init.js');
    expect(init.text).toContain("url: '/openapi.json'");
    const bundle = await http(cairn.url, 'GET', '/docs/assets/swagger-ui-bundle.js');
    expect(bundle.text).toContain('SwaggerUIBundle');
  });

  it('serves only the files the page uses, as problem+json 404s otherwise', async () => {
    for (const path of [
      '/docs/assets/index.html',
      '/docs/assets/swagger-initializer.js',
      '/docs/assets/../package.json',
      '/docs/assets/nested/swagger-ui.css',
    ]) {
      const res = await http(cairn.url, 'GET', path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toMatch(/^application\/problem\+json/);
    }
  });
});
