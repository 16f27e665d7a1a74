import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTokenByHash, revokeToken } from '../../libs/auth/token.repository.ts';
import { authenticate, issueToken } from '../../libs/auth/token.service.ts';
import { openTokenCache, type TokenCache } from '../../libs/auth/token-cache.ts';
import { hashSecret } from '../../libs/auth/token-secret.ts';
import { openPostgres, type Postgres } from '../../libs/storage/postgres.ts';
import { migratePostgres } from '../../libs/storage/postgres-migrations.ts';
import {
  createTestDatabase,
  migratedPglite,
  type TestDatabase,
  tempDir,
  USE_SERVERS,
  waitFor,
} from '../support/engines.ts';

/** The token cache against this run's Postgres (PGlite, or a scratch database on the server). */
describe('token cache: refused digests, shared look-ups, revocations racing a look-up', () => {
  let postgres: Postgres;
  let cleanup: () => Promise<void>;
  let tokens: Awaited<ReturnType<typeof openTokenCache>>;
  const MAX_ENTRIES = 100;
  const TTL_MS = 60_000;

  beforeAll(async () => {
    if (USE_SERVERS) {
      const database: TestDatabase = await createTestDatabase();
      postgres = await openPostgres({ url: database.url });
      cleanup = () => database.drop();
    } else {
      const dir = await tempDir();
      postgres = await openPostgres({ dataDir: await migratedPglite(path.join(dir, 'pg')) });
      cleanup = () => fs.rm(dir, { recursive: true, force: true });
    }
    await migratePostgres(postgres.db);
    tokens = await openTokenCache(postgres, { ttlMs: TTL_MS, maxEntries: MAX_ENTRIES });
  });
  afterAll(async () => {
    await tokens.close();
    await postgres.close();
    await cleanup();
  });

  /** The real look-up, counted. */
  const counted = () => {
    const calls = { n: 0 };
    const load = (digest: string) => {
      calls.n += 1;
      return findTokenByHash(postgres.db, digest);
    };
    return { calls, load };
  };
  const madeUp = () => hashSecret(`cairn_${randomBytes(24).toString('base64url')}`);
  const cache = (): TokenCache => tokens.cache;

  it('looks a burst of one unknown digest up once, and refuses it from memory until it expires', async () => {
    const { calls, load } = counted();
    const digest = madeUp();
    const now = Date.now();
    const rows = await Promise.all(
      Array.from({ length: 50 }, () => cache().find(digest, now, load)),
    );
    expect(rows.every((row) => row === undefined)).toBe(true);
    expect(calls.n).toBe(1);
    expect(await cache().find(digest, now + TTL_MS - 1, load)).toBeUndefined();
    expect(calls.n).toBe(1);
    // Briefly: once the entry lapses, the digest is asked about again.
    expect(await cache().find(digest, now + TTL_MS, load)).toBeUndefined();
    expect(calls.n).toBe(2);
  });

  it('holds no more refused digests than its bound, however many made-up tokens arrive', async () => {
    const { calls, load } = counted();
    const now = Date.now();
    for (let n = 0; n < 5 * MAX_ENTRIES; n += 1) await cache().find(madeUp(), now, load);
    expect(calls.n).toBe(5 * MAX_ENTRIES);
    expect(cache().refusedSize).toBe(MAX_ENTRIES);
  });

  it('lets a token issued after a flood in at once, and keeps refusing a revoked one from memory', async () => {
    const now = Date.now();
    for (let n = 0; n < 2 * MAX_ENTRIES; n += 1) await cache().find(madeUp(), now, counted().load);
    const issued = await issueToken(
      postgres.db,
      { name: 'after', scopes: ['workflows:read'], businesses: ['acme'] },
      new Date(),
    );
    const header = `Bearer ${issued.token}`;
    expect(await authenticate(postgres.db, header, undefined, new Date(), cache())).toMatchObject({
      kind: 'token',
      id: issued.id,
    });

    expect(await revokeToken(postgres.db, issued.id, new Date())).toBe(true);
    // Refused once the announcement is heard (at once on PGlite, a moment later on a server).
    await waitFor(async () => {
      const principal = await authenticate(postgres.db, header, undefined, new Date(), cache());
      return principal.kind === 'invalid' && principal.reason.includes('revoked');
    });
    const { calls, load } = counted();
    const digest = hashSecret(issued.token);
    // At most one more look-up, should the announcement have overtaken the one above.
    for (let n = 0; n < 20; n += 1) await cache().find(digest, Date.now(), load);
    expect(calls.n).toBeLessThanOrEqual(1);
    const after = calls.n;
    for (let n = 0; n < 20; n += 1) {
      expect((await cache().find(digest, Date.now(), load))?.revoked_at).toBeInstanceOf(Date);
    }
    expect(calls.n).toBe(after);
  });

  it('never keeps a row read before a revocation that overtook its look-up', async () => {
    const issued = await issueToken(
      postgres.db,
      { name: 'raced', scopes: ['workflows:read'], businesses: ['acme'] },
      new Date(),
    );
    const digest = hashSecret(issued.token);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The row is read (live), then its answer is held back while the token is revoked.
    const slow = cache().find(digest, Date.now(), async (hash) => {
      const row = await findTokenByHash(postgres.db, hash);
      await held;
      return row;
    });
    expect(await revokeToken(postgres.db, issued.id, new Date())).toBe(true);
    cache().clear();
    release();
    // The request that started before the revocation may still pass; no later one may.
    expect((await slow)?.revoked_at).toBeNull();
    expect(
      await authenticate(postgres.db, `Bearer ${issued.token}`, undefined, new Date(), cache()),
    ).toMatchObject({ kind: 'invalid', reason: expect.stringContaining('revoked') });
  });
});
