import { beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../libs/auth/principal.ts';
import type { Route } from '../../libs/http/route.ts';
import { ALL_SCOPES, randomSecret } from '../support/auth.ts';
import { useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';

/** Every non-empty subset of the scopes: 31 token shapes. */
const SCOPE_SETS: Scope[][] = Array.from({ length: 2 ** ALL_SCOPES.length - 1 }, (_, i) =>
  ALL_SCOPES.filter((_, bit) => (i + 1) & (1 << bit)),
);

/** A concrete path for a template; ids that exist nowhere, so nothing can change. */
const pathOf = (route: Route) =>
  route.path.replace(/:(\w+)/g, (_, name: string) =>
    name === 'id' ? 'tok_0000000000000000' : `missing-${name}`,
  );

/**
 * Public routes whose credential is in the path (an embed token): whoever calls, a made-up one
 * is a 401 of their own, never a Bearer challenge (no bearer credential would open them).
 */
const pathCredential = (route: Route) => route.scope === null && route.path.startsWith('/embed/');

/** What any principal gets from a route that asks nothing of it. */
function expectPublic(route: Route, res: { status: number; headers: Headers }, label: string) {
  if (pathCredential(route)) {
    expect(res.status, label).toBe(401);
    expect(res.headers.get('www-authenticate'), label).toBeNull();
  } else {
    expect([401, 403], label).not.toContain(res.status);
  }
}

describe('scope matrix: every route × every principal', () => {
  const cairn = useCairn({
    env: { CAIRN_MASTER_KEY: randomSecret() },
    rateLimits: { anonymous: 10_000 },
  });
  beforeAll(async () => {
    // The matrix sends a few hundred requests; budgets are not what it tests.
  });

  const call = (route: Route, headers: Record<string, string>) =>
    http(cairn.url, route.method.toUpperCase(), pathOf(route), {
      headers,
      ...(route.method === 'post' || route.method === 'put' ? { body: {} } : {}),
    });

  it('covers the whole route table', () => {
    expect(cairn.routes.length).toBeGreaterThanOrEqual(4);
    for (const route of cairn.routes) {
      expect([null, 'master', 'token', 'reader', ...ALL_SCOPES]).toContain(route.scope);
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
          expectPublic(route, res, label);
          continue;
        }
        expect(res.status, label).toBe(401);
        expect(res.headers.get('www-authenticate'), label).toMatch(/^Bearer/);
      }
    }
  });

  it('lets the master key reach exactly the master routes', async () => {
    for (const route of cairn.routes) {
      const res = await call(route, cairn.master);
      const label = `${route.method} ${route.path}`;
      if (route.scope === null) {
        expectPublic(route, res, label);
      } else if (route.scope === 'master' || route.scope === 'reader') {
        expect([401, 403], label).not.toContain(res.status);
      } else if (route.scope === 'token') {
        // The master key is not an API token: it has no scopes, businesses or budget of its own.
        expect(res.status, label).toBe(403);
        expect(res.body.required, label).toBe('token');
      } else {
        expect(res.status, label).toBe(403);
        expect(res.body.required_scope, label).toBe(route.scope);
      }
    }
  });

  it('lets a token through exactly when it holds the declared scope', async () => {
    for (const scopes of SCOPE_SETS) {
      const headers = await cairn.token({ scopes, businesses: ['acme'] });
      for (const route of cairn.routes) {
        const res = await call(route, headers);
        const label = `${route.method} ${route.path} with [${scopes.join(', ')}]`;
        if (route.scope === null) {
          expectPublic(route, res, label);
        } else if (route.scope === 'token') {
          expect([401, 403], label).not.toContain(res.status);
        } else if (route.scope === 'master') {
          expect(res.status, label).toBe(403);
        } else if (scopes.includes(route.scope === 'reader' ? 'analytics:read' : route.scope)) {
          expect([401, 403], label).not.toContain(res.status);
        } else {
          expect(res.status, label).toBe(403);
          expect(res.headers.get('content-type'), label).toContain('application/problem+json');
          expect(res.body.required_scope, label).toBe(
            route.scope === 'reader' ? 'analytics:read' : route.scope,
          );
        }
      }
    }
  });
});
