import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrivateServer, privatePostgres } from '../../dev-tools/private-servers.ts';
import { unlimited, useCairn } from '../support/cairn.ts';
import { waitFor } from '../support/engines.ts';
import { http } from '../support/http.ts';

const STATEMENT_TIMEOUT_MS = 1_000;

/**
 * A Postgres of the test's own that is stopped or frozen under a running service: every answer
 * is a 503 or 504 problem within the configured limits, never a 500 or a hang, and a write that
 * was answered with a timeout never commits afterwards.
 */
describe('Postgres faults', () => {
  let postgres: PrivateServer;
  beforeAll(async () => {
    postgres = await privatePostgres();
  }, 120_000);
  afterAll(async () => {
    await postgres?.stop();
  });
  const cairn = useCairn(() => ({
    env: {
      DATABASE_URL: postgres.url,
      REDIS_URL: '',
      CAIRN_PG_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
      CAIRN_PG_CONNECT_TIMEOUT_MS: '1000',
      CAIRN_PG_ACQUIRE_TIMEOUT_MS: '1000',
    },
    rateLimits: unlimited(),
    businesses: ['pf'],
  }));
  let auth: Record<string, string>;
  /** Each test thaws what it froze (in `finally`), so the harness can always close the service. */
  const warm = async () => {
    auth = cairn.auth;
    // Seen once, the token is served from the cache while Postgres is away.
    const res = await http(cairn.url, 'GET', '/api/v1/tasks?business=pf', { headers: auth });
    expect(res.status).toBe(200);
  };

  const countTasks = async (name: string) => {
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    try {
      const { rows } = await client.query('select count(*)::int as n from tasks where name = $1', [
        name,
      ]);
      return rows[0].n as number;
    } finally {
      await client.end();
    }
  };

  it('answers a frozen Postgres within the statement timeout + 1 s, and the write never commits', async () => {
    await warm();
    await postgres.pause?.();
    const started = Date.now();
    let res: Awaited<ReturnType<typeof http>>;
    try {
      res = await http(cairn.url, 'POST', '/api/v1/tasks', {
        headers: auth,
        body: { business: 'pf', name: 'written while frozen' },
      });
    } finally {
      await postgres.resume?.();
    }
    const elapsed = Date.now() - started;
    expect([503, 504], res.text).toContain(res.status);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    // Statement timeout + 1 s is the design; the rest is slack for a busy machine.
    expect(elapsed).toBeLessThan(STATEMENT_TIMEOUT_MS + 1_000 + 4_000);

    // The service recovers on its own once Postgres answers again.
    await waitFor(
      async () => {
        const ok = await http(cairn.url, 'POST', '/api/v1/tasks', {
          headers: auth,
          body: { business: 'pf', name: 'after the thaw' },
        });
        return ok.status === 201;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    // Every backend that was frozen has now read whatever reached it and gone; none committed.
    await waitFor(
      async () => {
        const client = new pg.Client({ connectionString: postgres.url });
        await client.connect();
        try {
          const { rows } = await client.query(
            `select count(*)::int as n from pg_stat_activity
             where backend_type = 'client backend' and state = 'active' and pid <> pg_backend_pid()`,
          );
          return rows[0].n === 0;
        } finally {
          await client.end();
        }
      },
      { timeoutMs: 30_000 },
    );
    expect(await countTasks('written while frozen')).toBe(0);
  }, 120_000);

  it('answers a stopped Postgres with 503 and Retry-After, then recovers', async () => {
    await warm();
    // Refused once while Postgres is up, an unknown token is then refused from memory.
    const recent = { Authorization: 'Bearer recently-refused-token-0123456789' };
    expect((await http(cairn.url, 'GET', '/api/v1/tasks', { headers: recent })).status).toBe(401);
    await postgres.kill();
    try {
      for (const [method, path, body] of [
        ['POST', '/api/v1/tasks', { business: 'pf', name: 'while down' }],
        ['GET', '/api/v1/tasks?business=pf', undefined],
        ['GET', '/api/v1/tasks/00000000-0000-4000-8000-000000000000', undefined],
      ] as const) {
        const res = await http(cairn.url, method, path, { headers: auth, body });
        expect(res.status, `${method} ${path}: ${res.text}`).toBe(503);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      // An unknown token needs the database too: still a 503, not a 500.
      const unknown = await http(cairn.url, 'GET', '/api/v1/tasks', {
        headers: { Authorization: 'Bearer not-a-token-anyone-issued' },
      });
      expect(unknown.status, unknown.text).toBe(503);
      const again = await http(cairn.url, 'GET', '/api/v1/tasks', { headers: recent });
      expect(again.status, again.text).toBe(401);
    } finally {
      await postgres.start();
    }
    await waitFor(
      async () => {
        const ok = await http(cairn.url, 'POST', '/api/v1/tasks', {
          headers: auth,
          body: { business: 'pf', name: 'after the restart' },
        });
        return ok.status === 201;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
  }, 120_000);
});
