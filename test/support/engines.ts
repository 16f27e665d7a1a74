import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, inject } from 'vitest';
import { waitFor } from '../../dev-tools/wait-for.ts';
import { type Config, loadConfig } from '../../libs/config/config.ts';
import { openPostgres, type Postgres } from '../../libs/storage/postgres.ts';
import { migratePostgres } from '../../libs/storage/postgres-migrations.ts';
import {
  createScratchDatabase,
  type ScratchDatabase,
  uniqueName,
} from '../../libs/storage/scratch-database.ts';
import { seedPglite } from './pglite-template.ts';

export { uniqueName, waitFor };

/** The machine's Postgres and Redis, for tests of the real-server paths. */
export const SERVER_POSTGRES_URL =
  process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const SERVER_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Which engine set this run uses: `.ci/run` runs the suite once embedded, once on servers. */
export const USE_SERVERS = process.env.DATABASE_URL !== undefined;

export async function tempDir(prefix = 'cairn-test-'): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), prefix));
}

/**
 * An embedded Postgres data directory at `dir` that already holds every migration: a copy of
 * the migrated template (see pglite-template.ts), for tests that open PGlite themselves.
 */
export async function migratedPglite(dir: string): Promise<string> {
  await seedPglite(inject('pgliteTemplate'), dir);
  return dir;
}

export type TestDatabase = ScratchDatabase;

/** A fresh database on the Postgres server, so test files can run in parallel. */
export function createTestDatabase(serverUrl = SERVER_POSTGRES_URL): Promise<TestDatabase> {
  return createScratchDatabase(serverUrl);
}

/**
 * A migrated scratch database on the machine's Postgres for one file's tests (outbox, projector
 * and rollup tests that drive the projection without a server): opened before the first test,
 * dropped after the last.
 */
export function useMigratedPostgres(): { readonly pg: Postgres; readonly url: string } {
  let database: TestDatabase | undefined;
  let pg: Postgres | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
    pg = await openPostgres({ url: database.url });
    await migratePostgres(pg.db);
  });
  afterAll(async () => {
    await pg?.close();
    await database?.drop();
  });
  const opened = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the scratch database is opened in beforeAll');
    return value;
  };
  return {
    get pg() {
      return opened(pg);
    },
    get url() {
      return opened(database).url;
    },
  };
}

export interface TestConfig {
  config: Config;
  cleanup(): Promise<void>;
}

/**
 * A configuration for this test file: embedded engines in a temp dir (Postgres a copy of the
 * migrated template, see pglite-template.ts), or (when the run uses
 * servers, or `servers` is set) a fresh Postgres database and Redis prefix. ClickHouse is
 * always chDB here.
 */
export async function testConfig(
  overrides: Record<string, string> = {},
  {
    servers = USE_SERVERS,
    fresh = false,
  }: {
    servers?: boolean;
    /** Embedded Postgres created from nothing, not copied from the migrated template. */
    fresh?: boolean;
  } = {},
): Promise<TestConfig> {
  const dataDir = await tempDir();
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    CAIRN_PROJECTOR_POLL_MS: '100',
    // Engine time limits sized for a busy 2-core machine, not for production; fault tests set
    // their own short ones.
    CAIRN_PG_CONNECT_TIMEOUT_MS: '30000',
    CAIRN_PG_STATEMENT_TIMEOUT_MS: '60000',
    CAIRN_PG_ACQUIRE_TIMEOUT_MS: '60000',
    CAIRN_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS: '60000',
    CAIRN_QUERY_TIMEOUT_MS: '60000',
    CAIRN_QUERY_QUEUE_WAIT_MS: '60000',
  };
  let database: TestDatabase | undefined;
  if (servers) {
    database = await createTestDatabase(process.env.DATABASE_URL ?? SERVER_POSTGRES_URL);
    env.DATABASE_URL = database.url;
    env.REDIS_URL = process.env.REDIS_URL ?? SERVER_REDIS_URL;
    env.CAIRN_REDIS_PREFIX = uniqueName('cairn_t');
  }
  const config = loadConfig({ ...env, ...overrides });
  if (!config.databaseUrl && !fresh) {
    await seedPglite(inject('pgliteTemplate'), config.dataPaths.postgres);
  }
  return {
    config,
    async cleanup() {
      await database?.drop();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}
