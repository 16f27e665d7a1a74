import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeToken } from '../../libs/auth/token.repository.ts';
import { authenticate, issueToken } from '../../libs/auth/token.service.ts';
import { openTokenCache, type TokenCache } from '../../libs/auth/token-cache.ts';
import { openPostgres, type Postgres } from '../../libs/storage/postgres.ts';
import { migratePostgres } from '../../libs/storage/postgres-migrations.ts';
import {
  createTestDatabase,
  migratedPglite,
  type TestDatabase,
  tempDir,
  waitFor,
} from '../support/engines.ts';

const newToken = async (postgres: Postgres, name: string) =>
  issueToken(
    postgres.db,
    { name, scopes: ['workflows:read'], businesses: ['acme'], kind: 'service_account' },
    new Date(),
  );

const principalOf = (postgres: Postgres, token: string, cache: TokenCache) =>
  authenticate(postgres.db, `Bearer ${token}`, undefined, new Date(), cache);

// Stands for "this instance answered from its cache": the row changed underneath without any
// announcement, and the cached copy is still what authenticates.
const widenScopesSilently = (postgres: Postgres, id: string) =>
  sql`update api_tokens set scopes = '{workflows:read,analytics:read}' where id = ${id}`.execute(
    postgres.db,
  );

describe('token cache on a Postgres server: revocations from any instance', () => {
  let database: TestDatabase;
  let instance: Postgres;
  let other: Postgres;
  let tokens: Awaited<ReturnType<typeof openTokenCache>>;
  beforeAll(async () => {
    database = await createTestDatabase();
    instance = await openPostgres({ url: database.url });
    other = await openPostgres({ url: database.url });
    await migratePostgres(instance.db);
    tokens = await openTokenCache(instance);
  });
  afterAll(async () => {
    await tokens.close();
    await instance.close();
    await other.close();
    await database.drop();
  });

  it('answers from the cache, and refuses a token revoked by another process', async () => {
    const issued = await newToken(instance, 'cached');
    expect(await principalOf(instance, issued.token, tokens.cache)).toMatchObject({
      kind: 'token',
      scopes: ['workflows:read'],
    });
    await widenScopesSilently(instance, issued.id);
    expect(await principalOf(instance, issued.token, tokens.cache)).toMatchObject({
      scopes: ['workflows:read'],
    });

    const revokedAt = Date.now();
    expect(await revokeToken(other.db, issued.id, new Date())).toBe(true);
    await waitFor(async () => {
      const principal = await principalOf(instance, issued.token, tokens.cache);
      return principal.kind === 'invalid' && principal.reason.includes('revoked');
    });
    expect(Date.now() - revokedAt).toBeLessThan(2_000);
  });

  it('a revocation that rolls back is not announced', async () => {
    const issued = await newToken(instance, 'kept');
    await principalOf(instance, issued.token, tokens.cache);
    await other.db
      .transaction()
      .execute(async (trx) => {
        await revokeToken(trx, issued.id, new Date());
        throw new Error('rolled back');
      })
      .catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(tokens.cache.size).toBeGreaterThan(0);
    expect(await principalOf(instance, issued.token, tokens.cache)).toMatchObject({
      kind: 'token',
    });
  });

  it('forgets everything when it stops hearing revocations, and caches again once back', async () => {
    const issued = await newToken(instance, 'deaf');
    await principalOf(instance, issued.token, tokens.cache);
    expect(tokens.cache.size).toBeGreaterThan(0);

    const listeners = () =>
      sql<{ pid: number }>`select pid from pg_stat_activity
        where datname = current_database() and query ilike 'LISTEN%'`.execute(other.db);
    const before = (await listeners()).rows;
    expect(before).toHaveLength(1);
    await sql`select pg_terminate_backend(${before[0]!.pid})`.execute(other.db);
    // Revoked while nobody listens, without an announcement: a cache that kept its rows
    // would go on accepting this token until they expire.
    await sql`update api_tokens set revoked_at = now() where id = ${issued.id}`.execute(other.db);
    await waitFor(async () => {
      const principal = await principalOf(instance, issued.token, tokens.cache);
      return principal.kind === 'invalid';
    });

    await waitFor(async () => {
      const now = (await listeners()).rows;
      return now.length === 1 && now[0]!.pid !== before[0]!.pid;
    });
    const fresh = await newToken(instance, 'after');
    await waitFor(async () => {
      await principalOf(instance, fresh.token, tokens.cache);
      return tokens.cache.size > 0;
    });
  });
});

describe('token cache on PGlite', () => {
  let dir: string;
  let postgres: Postgres;
  let tokens: Awaited<ReturnType<typeof openTokenCache>>;
  beforeAll(async () => {
    dir = await tempDir();
    postgres = await openPostgres({ dataDir: await migratedPglite(path.join(dir, 'pg')) });
    await migratePostgres(postgres.db);
    tokens = await openTokenCache(postgres);
  });
  afterAll(async () => {
    await tokens.close();
    await postgres.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('caches, and a revocation empties it by the time the revoke returns', async () => {
    const issued = await newToken(postgres, 'embedded');
    await principalOf(postgres, issued.token, tokens.cache);
    await widenScopesSilently(postgres, issued.id);
    expect(await principalOf(postgres, issued.token, tokens.cache)).toMatchObject({
      scopes: ['workflows:read'],
    });
    expect(await revokeToken(postgres.db, issued.id, new Date())).toBe(true);
    expect(await principalOf(postgres, issued.token, tokens.cache)).toMatchObject({
      kind: 'invalid',
      reason: expect.stringContaining('revoked'),
    });
  });

  it('checks expiry on every request, cached or not', async () => {
    const issued = await issueToken(
      postgres.db,
      { name: 'short', scopes: ['workflows:read'], businesses: ['acme'], expires_in_days: 1 },
      new Date(),
    );
    await principalOf(postgres, issued.token, tokens.cache);
    const later = new Date(Date.now() + 2 * 86_400_000);
    expect(
      await authenticate(postgres.db, `Bearer ${issued.token}`, undefined, later, tokens.cache),
    ).toMatchObject({ kind: 'invalid', reason: expect.stringContaining('expired') });
  });
});
