import { afterAll, beforeAll } from 'vitest';
import { type Cairn, type CairnOptions, startCairn } from '../../apps/server/cairn.ts';
import type { Config } from '../../libs/config/config.ts';
import { authHeader, masterHeader, type TokenSpec } from './auth.ts';
import { testConfig } from './engines.ts';
import { serveDocument } from './live-documents.ts';

type Header = { Authorization: string };

export interface TestCairnOptions extends Omit<CairnOptions, 'config'> {
  /** Settings on top of the per-file defaults (fresh data directory, port 0, silent logs). */
  env?: Record<string, string>;
  /** Real Postgres and Redis (a fresh database and key prefix) whatever mode the run is in. */
  servers?: boolean;
  /**
   * Run on this configuration instead of a fresh one, e.g. a second instance on the same
   * engines. The harness then owns only the process: close() leaves the engines' data alone.
   */
  config?: Config;
  /** Businesses of `auth`. Default `['acme']`. */
  businesses?: string[];
  /** Scopes of `auth`. Default: every scope. */
  scopes?: TokenSpec['scopes'];
  /** false: issue no token at start (a test that counts tokens); `auth` is then empty. */
  issueToken?: boolean;
}

export interface TestCairn extends Cairn {
  /** Authorization header of a user token for `businesses` with `scopes`. */
  auth: Header;
  /** Authorization header carrying the master key (token endpoints only). */
  master: Header;
  /** The service's own Postgres handle, for arranging and checking rows. */
  db: Cairn['engines']['postgres']['db'];
  /** Issues another real token in the service's database. */
  token(spec: TokenSpec): Promise<Header>;
  /** Stops the service, then drops the database and data directory it was given. Idempotent. */
  close(): Promise<void>;
}

const NO_LIMITS = { anonymous: 1e9, user: 1e9, service_account: 1e9 };
/** Rate limits high enough never to be reached, for tests that send many requests. */
export const unlimited = (): typeof NO_LIMITS => ({ ...NO_LIMITS });

/** Starts one Cairn for a test that manages its own lifetime; prefer `useCairn`. */
export async function startTestCairn(options: TestCairnOptions = {}): Promise<TestCairn> {
  const {
    env = {},
    servers,
    config: shared,
    businesses = ['acme'],
    scopes,
    issueToken = true,
    ...rest
  } = options;
  const setup = shared
    ? { config: shared, cleanup: async () => {} }
    : await testConfig(env, { servers });
  let cairn: Cairn;
  try {
    cairn = await startCairn({ ...rest, config: setup.config });
  } catch (error) {
    await setup.cleanup();
    throw error;
  }
  // Every answer a test gets through `http` is checked against the document this server serves.
  serveDocument(cairn.url, cairn.app.locals.openapi);
  let closing: Promise<void> | undefined;
  const token = (spec: TokenSpec) => authHeader(cairn, spec);
  return {
    ...cairn,
    db: cairn.engines.postgres.db,
    auth: issueToken
      ? await token(scopes ? { businesses, scopes } : { businesses })
      : { Authorization: '' },
    master: masterHeader(cairn),
    token,
    close() {
      closing ??= cairn.close().finally(() => setup.cleanup());
      return closing;
    },
  };
}

/**
 * The one way a test file starts the service in process:
 *
 * ```ts
 * const cairn = useCairn({ businesses: ['acme'], env: { CAIRN_QUERY_MAX_ROWS: '5' } });
 * it('…', async () => {
 *   const res = await http(cairn.url, 'GET', '/api/v1/tasks/x', { headers: cairn.auth });
 *   await cairn.db.selectFrom('outbox')…;
 * });
 * ```
 *
 * Registers `beforeAll` (start on fresh engines: embedded, or a new database and Redis prefix
 * when the run uses servers) and `afterAll` (close, drop, delete) in the enclosing suite, and
 * returns a handle filled in once `beforeAll` has run, so read its members inside tests and
 * hooks, not when the suite is defined. `options` may be a function, evaluated in `beforeAll`,
 * when it depends on something an earlier hook set up (another instance, a private server).
 */
export function useCairn(
  options: TestCairnOptions | (() => TestCairnOptions | Promise<TestCairnOptions>) = {},
): TestCairn {
  const handle = {} as TestCairn;
  beforeAll(async () => {
    Object.assign(
      handle,
      await startTestCairn(typeof options === 'function' ? await options() : options),
    );
  }, 120_000);
  afterAll(async () => {
    await handle.close?.();
  }, 120_000);
  return handle;
}
