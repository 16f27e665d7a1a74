// Made-up embed tokens: each would be a caller of its own with a fresh budget, so the address
// sending refused ones pays for them at the anonymous rate.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';

describe('embed tokens guessed from one address', () => {
  const cairn = useCairn({
    businesses: ['acme'],
    scopes: ['analytics:read', 'analytics:write'],
    rateLimits: { anonymous: 5 },
  });
  const guess = () => `/embed/${randomBytes(24).toString('base64url')}/answer`;

  it('are charged to the address: once it has spent its budget, it is refused before any look-up', async () => {
    const view = await http(cairn.url, 'POST', '/api/v1/views', {
      headers: cairn.auth,
      body: { name: 'by project', query: { metrics: ['tasks_created'], period: 'last_7_days' } },
    });
    expect(view.status, JSON.stringify(view.body)).toBe(201);
    const embed = await http(cairn.url, 'POST', `/api/v1/views/${view.body.data.id}/embeds`, {
      headers: cairn.auth,
      body: { expires_in_days: 1 },
    });
    expect(embed.status).toBe(201);
    // A real token is the embed's caller and costs the address nothing.
    for (let i = 0; i < 8; i++) {
      expect((await http(cairn.url, 'GET', `${embed.body.data.url}/answer`)).status).toBe(200);
    }

    for (let i = 0; i < 5; i++) expect((await http(cairn.url, 'GET', guess())).status).toBe(401);
    // The count of the last refusal is written once its answer has gone.
    let refused = await http(cairn.url, 'GET', guess());
    for (let i = 0; i < 20 && refused.status === 401; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      refused = await http(cairn.url, 'GET', guess());
    }
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(refused.body.detail).toMatch(/refused embed tokens/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // The address is refused whatever token it brings, until the window turns.
    expect((await http(cairn.url, 'GET', `${embed.body.data.url}/answer`)).status).toBe(429);
    // API tokens pay for themselves.
    expect((await http(cairn.url, 'GET', '/api/v1/views', { headers: cairn.auth })).status).toBe(
      200,
    );
  });
});
