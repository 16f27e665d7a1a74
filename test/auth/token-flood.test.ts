import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { revokeToken } from '../../libs/auth/token.repository.ts';
import { issueToken } from '../../libs/auth/token.service.ts';
import { useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';

const randomToken = () => `cairn_${randomBytes(24).toString('base64url')}`;

/**
 * Reads of the token table as Postgres itself counts them (each look-up of a token by its
 * digest is one scan of `api_tokens`). A backend reports its counts now and then, so the
 * caller flushes its own and waits, with a look-up of its own, until the server's are in.
 */
async function tokenScans(db: ReturnType<typeof useCairn>['db']): Promise<number> {
  await sql`select pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<{ scans: string }>`
    select (coalesce(seq_scan, 0) + coalesce(idx_scan, 0))::text as scans
    from pg_stat_user_tables where relname = 'api_tokens'`.execute(db);
  return Number(rows[0]?.scans ?? 0);
}

/**
 * A backend reports its counts a second after going idle, but on a busy server sometimes only
 * ten seconds later (PGSTAT_IDLE_INTERVAL; the set-up's look-ups were seen arriving 9.6 s after
 * a marker's), so a marker's being counted does not mean look-ups on another of the server's
 * connections are. The count once it has held still for `quietMs`.
 */
async function steadyScans(
  db: ReturnType<typeof useCairn>['db'],
  quietMs: number,
): Promise<number> {
  let last = await tokenScans(db);
  let since = performance.now();
  while (performance.now() - since < quietMs) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = await tokenScans(db);
    if (now !== last) [last, since] = [now, performance.now()];
  }
  return last;
}

/** Longer than a backend waits at most to report its counts, with room for a busy machine. */
const ALL_REPORTED_MS = 15_000;

interface Client {
  /** The loopback address requests come from: each has its own anonymous rate limit. */
  address: string;
  agent: http.Agent;
}

const client = (address: string): Client => ({
  address,
  agent: new http.Agent({ keepAlive: true, maxSockets: 8, localAddress: address }),
});

function send(
  base: string,
  path: string,
  { from, method = 'GET', token }: { from: Client; method?: string; token: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL(path, base),
      { method, agent: from.agent, headers: { Authorization: `Bearer ${token}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/**
 * `count` requests from 8 concurrent clients at one address, each with a token from `token()`.
 * HEAD where asked: the pages' assets are served alike, without sending Swagger UI's bundle
 * hundreds of times over.
 */
async function flood(
  base: string,
  from: Client,
  paths: readonly string[],
  token: (n: number) => string,
  {
    count = 400,
    method = () => 'GET',
    by = (_path, status) => String(status),
  }: {
    count?: number;
    method?: (path: string) => string;
    /** How an answer is tallied. */
    by?: (path: string, status: number) => string;
  } = {},
): Promise<Record<string, number>> {
  const statuses: Record<string, number> = {};
  let sent = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (sent < count) {
        const n = sent++;
        const path = paths[n % paths.length] as string;
        const { status } = await send(base, path, { from, method: method(path), token: token(n) });
        const tally = by(path, status);
        statuses[tally] = (statuses[tally] ?? 0) + 1;
      }
    }),
  );
  return statuses;
}

describe('a flood of made-up bearer tokens', () => {
  // The contract's rate limits: 60 a minute for an address without a valid token.
  const cairn = useCairn({
    businesses: ['tf'],
    env: { CAIRN_MASTER_KEY: randomBytes(24).toString('hex') },
  });
  // Each test from its own loopback address, so each starts with a fresh anonymous budget.
  const clients = ['127.0.0.2', '127.0.0.3', '127.0.0.4'].map(client);
  afterAll(() => {
    for (const { agent } of clients) agent.destroy();
  });

  /**
   * Sends one request with a token never seen and waits until its look-up is counted: every
   * look-up before it (same connection) is counted by then too. Returns the look-ups since
   * `before`, the marker's left out.
   */
  const settled = async (from: Client, before: number, lookups: number, quietMs = 1_500) => {
    const marker = await send(cairn.url, '/api/v1/tokens/self', { from, token: randomToken() });
    expect([401, 429]).toContain(marker.status);
    await waitFor(async () => (await tokenScans(cairn.db)) >= before + lookups + 1, {
      timeoutMs: 30_000,
      intervalMs: 200,
    });
    return (await steadyScans(cairn.db, quietMs)) - before - 1;
  };

  it('costs no token look-up on the free paths: probes, scrapes, pages and their assets', async () => {
    const from = clients[0] as Client;
    const page = await send(cairn.url, '/docs', { from, token: randomToken() });
    const assets = [...page.body.matchAll(/(?:src|href)="(\/docs\/assets\/[^"]+)"/g)].map(
      ([, ref]) => ref as string,
    );
    expect(assets.length).toBeGreaterThan(0);
    const paths = ['/healthz', '/readyz', '/metrics', '/docs', '/explore', ...assets];

    // The set-up's own look-ups may reach the statistics late on a busy machine: the count the
    // flood is measured from is taken once they are all in.
    await settled(from, await tokenScans(cairn.db), 0, ALL_REPORTED_MS);
    const before = await tokenScans(cairn.db);
    const statuses = await flood(cairn.url, from, paths, () => randomToken(), {
      count: 400,
      method: (path) => (path.startsWith('/docs/assets/') ? 'HEAD' : 'GET'),
      // Readiness may say "not ready" on a busy machine; it is the token it must not look up.
      by: (path, status) => (path === '/readyz' && status === 503 ? '200' : String(status)),
    });
    // Every one served (well past the anonymous 60 a minute), none refused.
    expect(statuses).toEqual({ 200: 400 });
    expect(await settled(from, before, 0)).toBe(0);
  }, 120_000);

  it('costs one look-up per distinct token on a metered path, and is rate-limited by address', async () => {
    const from = clients[1] as Client;
    const tokens = Array.from({ length: 20 }, () => randomToken());
    const before = await tokenScans(cairn.db);
    // Each token sent 20 times, by 8 clients at once: repeats in flight share one look-up.
    const statuses = await flood(
      cairn.url,
      from,
      ['/api/v1/tasks?business=tf'],
      (n) => tokens[Math.floor(n / 20)] as string,
    );
    expect(statuses).toEqual({ 401: 60, 429: 340 });
    expect(await settled(from, before, tokens.length)).toBe(tokens.length);

    // Again, all known-bad now: not one look-up.
    const again = await tokenScans(cairn.db);
    const refused = await flood(
      cairn.url,
      from,
      ['/api/v1/tasks?business=tf'],
      (n) => tokens[n % 20] as string,
      { count: 200 },
    );
    expect(refused).toEqual({ 429: 200 });
    expect(await settled(from, again, 0)).toBe(0);
  }, 120_000);

  it('lets a token issued after a flood in at once, refuses it at once when revoked, and from memory after', async () => {
    const from = clients[2] as Client;
    const issued = await issueToken(
      cairn.db,
      { name: 'late', scopes: ['workflows:read'], businesses: ['tf'], kind: 'service_account' },
      new Date(),
    );
    const self = () => send(cairn.url, '/api/v1/tokens/self', { from, token: issued.token });
    expect((await self()).status).toBe(200);
    // Revoked as another instance would (DELETE /api/v1/tokens/{id} is the same statement),
    // through the connection the look-ups use, so its scan is counted before the marker's.
    expect(await revokeToken(cairn.db, issued.id, new Date())).toBe(true);
    const refused = await waitFor(async () => {
      const answer = await self();
      return answer.status === 401 && answer;
    });
    expect(JSON.parse(refused.body)).toMatchObject({ detail: expect.stringContaining('revoked') });
    await settled(from, await tokenScans(cairn.db), 0, ALL_REPORTED_MS);

    // Sent again and again, a revoked token is refused from memory.
    const before = await tokenScans(cairn.db);
    const statuses = await flood(cairn.url, from, ['/api/v1/tokens/self'], () => issued.token, {
      count: 100,
    });
    // Refused as invalid, and charged to the address (two requests spent above): past its 60
    // a minute, 429s.
    expect(statuses).toEqual({ 401: 58, 429: 42 });
    expect(await settled(from, before, 0)).toBe(0);
  }, 120_000);
});
