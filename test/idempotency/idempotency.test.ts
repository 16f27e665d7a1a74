import { beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../../libs/auth/token.service.ts';
import { requestFingerprint } from '../../libs/idempotency/idempotency-fingerprint.ts';
import { ALL_SCOPES, randomSecret } from '../support/auth.ts';
import { useCairn } from '../support/cairn.ts';
import { uniqueName } from '../support/engines.ts';
import { http } from '../support/http.ts';

describe('Idempotency-Key', () => {
  let clock = new Date('2026-11-22T10:00:00.000Z');
  const cairn = useCairn({
    env: { CAIRN_MASTER_KEY: randomSecret() },
    now: () => clock,
  });
  let alice: { id: string; headers: Record<string, string> };
  let bob: { id: string; headers: Record<string, string> };

  const token = async (name: string) => {
    const issued = await issueToken(
      cairn.db,
      { name, scopes: ALL_SCOPES, businesses: ['acme'] },
      clock,
    );
    return { id: issued.id, headers: { Authorization: `Bearer ${issued.token}` } };
  };
  const post = (path: string, body: unknown, who: Record<string, string>, key?: string) =>
    http(cairn.url, 'POST', path, {
      body,
      headers: { ...who, ...(key === undefined ? {} : { 'Idempotency-Key': key }) },
    });
  const tasksNamed = async (name: string) =>
    (await cairn.db.selectFrom('tasks').select('gid').where('name', '=', name).execute()).length;

  beforeAll(async () => {
    alice = await token('alice');
    bob = await token('bob');
  });

  it('replays the first response, status, body and Location, without writing again', async () => {
    const name = uniqueName('replay');
    const first = await post('/api/v1/tasks', { business: 'acme', name }, alice.headers, 'k-1');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await post('/api/v1/tasks', { name, business: 'acme' }, alice.headers, 'k-1');
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(await tasksNamed(name)).toBe(1);
  });

  it('answers 422 when the key comes back with a different request', async () => {
    const name = uniqueName('mismatch');
    await post('/api/v1/tasks', { business: 'acme', name }, alice.headers, 'k-2');
    const other = await post(
      '/api/v1/tasks',
      { business: 'acme', name: 'x' },
      alice.headers,
      'k-2',
    );
    expect(other.status).toBe(422);
    expect(other.headers.get('content-type')).toContain('application/problem+json');
    const otherRoute = await post(
      '/api/v1/query',
      { metrics: ['tasks_created'] },
      alice.headers,
      'k-2',
    );
    expect(otherRoute.status).toBe(422);
    expect(await tasksNamed('x')).toBe(0);
  });

  it('keeps keys per principal', async () => {
    const name = uniqueName('scoped');
    const a = await post('/api/v1/tasks', { business: 'acme', name }, alice.headers, 'shared');
    const b = await post('/api/v1/tasks', { business: 'acme', name }, bob.headers, 'shared');
    expect(b.status).toBe(201);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(b.body.data.gid).not.toBe(a.body.data.gid);
    expect(await tasksNamed(name)).toBe(2);
  });

  it('refuses an empty key or one longer than 255 characters with 400', async () => {
    const body = { business: 'acme', name: uniqueName('len') };
    expect((await post('/api/v1/tasks', body, alice.headers, '')).status).toBe(400);
    const long = await post('/api/v1/tasks', body, alice.headers, 'k'.repeat(256));
    expect(long.status).toBe(400);
    expect(long.headers.get('content-type')).toContain('application/problem+json');
    expect((await post('/api/v1/tasks', body, alice.headers, 'k'.repeat(255))).status).toBe(201);
  });

  it('releases the key when the request fails, so a retry runs again', async () => {
    const body = { business: 'elsewhere', name: uniqueName('fail') };
    expect((await post('/api/v1/tasks', body, alice.headers, 'k-fail')).status).toBe(404);
    expect((await post('/api/v1/tasks', body, alice.headers, 'k-fail')).status).toBe(404);
    const rows = await cairn.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('key', '=', 'k-fail')
      .execute();
    expect(rows).toEqual([]);
  });

  it('replays analytics queries', async () => {
    const body = { metrics: ['tasks_created'], period: 'all_time' };
    const first = await post('/api/v1/query', body, alice.headers, 'q-1');
    expect(first.status).toBe(200);
    const again = await post('/api/v1/query', body, alice.headers, 'q-1');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
  });

  it('replays token creation without keeping the token in clear', async () => {
    const body = { name: uniqueName('tok'), scopes: ['analytics:read'], businesses: ['acme'] };
    const first = await post('/api/v1/tokens', body, cairn.master, 't-1');
    expect(first.status).toBe(201);
    const again = await post('/api/v1/tokens', body, cairn.master, 't-1');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.token).toBe(first.body.data.token);
    const db = cairn.db;
    const issued = await db
      .selectFrom('api_tokens')
      .select('id')
      .where('name', '=', body.name)
      .execute();
    expect(issued).toHaveLength(1);
    const stored = await db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('key', '=', 't-1')
      .execute();
    expect(JSON.stringify(stored)).not.toContain(first.body.data.token);
  });

  it('answers 409 while the first request runs, and takes over a claim whose request died', async () => {
    const body = { business: 'acme', name: uniqueName('running') };
    const fingerprint = requestFingerprint({
      method: 'post',
      path: '/api/v1/tasks',
      params: {},
      query: {},
      body,
    });
    const claim = (key: string, createdAt: Date) =>
      cairn.db
        .insertInto('idempotency_keys')
        .values({
          principal: `token:${alice.id}`,
          key,
          fingerprint,
          claim_id: 'someone-else',
          status: 'in_progress',
          response_status: null,
          response_headers: null,
          response_body: null,
          created_at: createdAt,
          expires_at: new Date(createdAt.getTime() + 86_400_000),
        })
        .execute();
    await claim('k-running', clock);
    const busy = await post('/api/v1/tasks', body, alice.headers, 'k-running');
    expect(busy.status).toBe(409);
    expect(busy.headers.get('content-type')).toContain('application/problem+json');
    expect(await tasksNamed(body.name)).toBe(0);

    await claim('k-dead', new Date(clock.getTime() - 120_000));
    const takeover = await post('/api/v1/tasks', body, alice.headers, 'k-dead');
    expect(takeover.status).toBe(201);
    expect(await tasksNamed(body.name)).toBe(1);
  });

  it('runs 10 concurrent requests with one key exactly once', async () => {
    const name = uniqueName('burst');
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        post('/api/v1/tasks', { business: 'acme', name }, alice.headers, 'k-burst'),
      ),
    );
    expect(await tasksNamed(name)).toBe(1);
    const fresh = answers.filter((a) => a.status === 201 && !a.headers.get('idempotent-replayed'));
    expect(fresh).toHaveLength(1);
    for (const answer of answers) {
      expect([201, 409]).toContain(answer.status);
      if (answer.status === 201) expect(answer.text).toBe(fresh[0]?.text);
    }
    const replay = await post(
      '/api/v1/tasks',
      { business: 'acme', name },
      alice.headers,
      'k-burst',
    );
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });

  it('forgets keys after 24 hours and purges them', async () => {
    const name = uniqueName('expiry');
    await post('/api/v1/tasks', { business: 'acme', name }, alice.headers, 'k-old');
    clock = new Date(clock.getTime() + 24 * 3_600_000 + 1_000);
    const later = await post(
      '/api/v1/tasks',
      { business: 'acme', name: 'new' },
      alice.headers,
      'k-old',
    );
    expect(later.status).toBe(201);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    const expired = await cairn.db
      .selectFrom('idempotency_keys')
      .select('key')
      .where('expires_at', '<=', clock)
      .execute();
    expect(expired).toEqual([]);
    expect(await tasksNamed(name)).toBe(1);
  });
});
