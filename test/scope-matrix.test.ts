import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cairn, startCairn } from '../apps/server/cairn.ts';
import type { Route, Scope } from '../libs/platform/route.ts';
import { ALL_SCOPES, authHeader, masterHeader } from './support/auth.ts';
import { type TestConfig, testConfig } from './support/engines.ts';
import { http } from './support/http.ts';

/** Every non-empty subset of the scopes: 15 token shapes. */
const SCOPE_SETS: Scope[][] = Array.from({ length: 2 ** ALL_SCOPES.length - 1 }, (_, i) =>
  ALL_SCOPES.filter((_, bit) => (i + 1) & (1 << bit)),
);

/** A concrete path for a template; ids that exist nowhere, so nothing can change. */
const pathOf = (route: Route) =>
  route.path.replace(/:(\w+)/g, (_, name: string) =>
    name === 'id' ? 'tok_0000000000000000' : `missing-${name}`,
  );

describe('scope matrix: every route × every principal', () => {
  let setup: TestConfig;
  let cairn: Cairn;
  beforeAll(async () => {
    setup = await testConfig({ CAIRN_MASTER_KEY: 'scope-matrix-master-key-01234567' });
    // The matrix sends a few hundred requests; budgets are not what it tests.
    cairn = await startCairn({ config: setup.config, rateLimits: { anonymous: 10_000 } });
  });
  afterAll(async () => {
    await cairn.close();
    await setup.cleanup();
  });

  const call = (route: Route, headers: Record<string, string>) =>
    http(cairn.url, route.method.toUpperCase(), pathOf(route), {
      headers,
      ...(route.method === 'post' || route.method === 'put' ? { body: {} } : {}),
    });

  it('covers the whole route table', () => {
    expect(cairn.routes.length).toBeGreaterThanOrEqual(4);
    for (const route of cairn.routes) {
      expect([null, 'master', ...ALL_SCOPES]).toContain(route.scope);
    }
  });

  it('answers 401 with a Bearer challenge to anonymous and invalid callers', async () => {
    for (const route of cairn.routes) {
      for (const headers of [{}, { Authorization: 'Bearer cairn_unknown' }] as Record<
        string,
        string
      >[]) {
        const res = await call(route, headers);
        const label = `${route.method} ${route.path}`;
        if (route.scope === null) {
          expect([401, 403], label).not.toContain(res.status);
          continue;
        }
        expect(res.status, label).toBe(401);
        expect(res.headers.get('www-authenticate'), label).toMatch(/^Bearer/);
      }
    }
  });

  it('lets the master key reach exactly the master routes', async () => {
    for (const route of cairn.routes) {
      const res = await call(route, masterHeader(cairn));
      const label = `${route.method} ${route.path}`;
      if (route.scope === 'master' || route.scope === null) {
        expect([401, 403], label).not.toContain(res.status);
      } else {
        expect(res.status, label).toBe(403);
        expect(res.body.required_scope, label).toBe(route.scope);
      }
    }
  });

  it('lets a token through exactly when it holds the declared scope', async () => {
    for (const scopes of SCOPE_SETS) {
      const headers = await authHeader(cairn, { scopes, businesses: ['acme'] });
      for (const route of cairn.routes) {
        const res = await call(route, headers);
        const label = `${route.method} ${route.path} with [${scopes.join(', ')}]`;
        if (route.scope === null) {
          expect([401, 403], label).not.toContain(res.status);
        } else if (route.scope === 'master') {
          expect(res.status, label).toBe(403);
        } else if (scopes.includes(route.scope)) {
          expect([401, 403], label).not.toContain(res.status);
        } else {
          expect(res.status, label).toBe(403);
          expect(res.headers.get('content-type'), label).toContain('application/problem+json');
          expect(res.body.required_scope, label).toBe(route.scope);
        }
      }
    }
  });
});
