import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { type Config, loadConfig } from '../../libs/config/config.ts';

/** The machine's Postgres and Redis, for tests of the real-server paths. */
export const SERVER_POSTGRES_URL =
  process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const SERVER_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Which engine set this run uses: `.ci/run` runs the suite once embedded, once on servers. */
export const USE_SERVERS = process.env.DATABASE_URL !== undefined;

export const uniqueName = (prefix: string): string =>
  `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;

export async function tempDir(prefix = 'cairn-test-'): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), prefix));
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh database on the Postgres server, so test files can run in parallel. */
export async function createTestDatabase(serverUrl = SERVER_POSTGRES_URL): Promise<TestDatabase> {
  const name = uniqueName('cairn_t');
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

export interface TestConfig {
  config: Config;
  cleanup(): Promise<void>;
}

/**
 * A configuration for this test file: embedded engines in a temp dir, or (when the run uses
 * servers) a fresh Postgres database and Redis prefix. ClickHouse is always chDB here.
 */
export async function testConfig(overrides: Record<string, string> = {}): Promise<TestConfig> {
  const dataDir = await tempDir();
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'silent',
    CAIRN_PROJECTOR_POLL_MS: '100',
  };
  let database: TestDatabase | undefined;
  if (USE_SERVERS) {
    database = await createTestDatabase(process.env.DATABASE_URL);
    env.DATABASE_URL = database.url;
    env.REDIS_URL = process.env.REDIS_URL ?? SERVER_REDIS_URL;
    env.CAIRN_REDIS_PREFIX = uniqueName('cairn_t');
  }
  return {
    config: loadConfig({ ...env, ...overrides }),
    async cleanup() {
      await database?.drop();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

export async function waitFor<T>(
  probe: () => Promise<T | undefined | false>,
  { timeoutMs = 10_000, intervalMs = 50 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
