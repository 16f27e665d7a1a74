import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { METRIC_NAMES } from '../../libs/analytics/catalog/catalog.ts';
import { MAX_METRICS } from '../../libs/analytics/parse/query.schemas.ts';
import { unlimited, useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';

/** What a replay says about itself, what a caller hears while the first still runs, and what is kept. */
describe('idempotent replays', () => {
  const MAX_RESPONSE_BYTES = 2_048;
  const cairn = useCairn({
    businesses: ['ir'],
    rateLimits: unlimited(),
    env: { CAIRN_IDEMPOTENCY_MAX_RESPONSE_BYTES: String(MAX_RESPONSE_BYTES) },
  });

  const post = (path: string, key: string, body: unknown, requestId = randomUUID()) =>
    http(cairn.url, 'POST', path, {
      headers: { ...cairn.auth, 'Idempotency-Key': key, 'X-Request-ID': requestId },
      body,
    });

  it('answers the first body unchanged, with its own X-Request-ID and the first as Original-Request-ID', async () => {
    const key = randomUUID();
    const firstId = randomUUID();
    const first = await post('/api/v1/tasks', key, { business: 'ir', name: 'once' }, firstId);
    expect(first.status).toBe(201);
    expect(first.headers.get('x-request-id')).toBe(firstId);
    expect(first.headers.get('original-request-id')).toBeNull();

    const againId = randomUUID();
    const again = await post('/api/v1/tasks', key, { business: 'ir', name: 'once' }, againId);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('x-request-id')).toBe(againId);
    expect(again.headers.get('original-request-id')).toBe(firstId);
    expect(again.text).toBe(first.text);
    expect(again.body.meta.request_id).toBe(firstId);
  });

  it('asks a caller to retry after a moment while the first request still runs', async () => {
    const body = { business: 'ir', name: 'in flight' };
    const done = randomUUID();
    expect((await post('/api/v1/tasks', done, body)).status).toBe(201);
    // The same request under another key, claimed by a request that has not finished.
    const row = await cairn.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('key', '=', done)
      .executeTakeFirstOrThrow();
    const running = randomUUID();
    await cairn.db
      .insertInto('idempotency_keys')
      .values({
        ...row,
        key: running,
        claim_id: randomUUID(),
        status: 'in_progress',
        response_status: null,
        response_headers: null,
        response_body: null,
        created_at: new Date(),
      })
      .execute();
    const res = await post('/api/v1/tasks', running, body);
    expect(res.status, res.text).toBe(409);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('keeps no answer larger than the bound: the key is given back and a retry runs again', async () => {
    const key = randomUUID();
    const query = {
      // As many metrics as a query names: their column descriptions alone make the answer
      // larger than the bound.
      metrics: METRIC_NAMES.slice(0, MAX_METRICS),
      dimensions: ['day'],
      period: 'last_90_days',
    };
    // A small answer is kept as usual.
    const small = randomUUID();
    const once = { metrics: ['tasks_created'], period: 'last_7_days' };
    expect((await post('/api/v1/query', small, once)).status).toBe(200);
    expect((await post('/api/v1/query', small, once)).headers.get('idempotent-replayed')).toBe(
      'true',
    );
    const first = await post('/api/v1/query', key, query);
    expect(first.status, first.text.slice(0, 300)).toBe(200);
    expect(first.text.length).toBeGreaterThan(MAX_RESPONSE_BYTES);
    const kept = await cairn.db
      .selectFrom('idempotency_keys')
      .select('key')
      .where('key', '=', key)
      .execute();
    expect(kept).toEqual([]);
    const again = await post('/api/v1/query', key, query);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
  });
});
