// The deployment shape on one machine: a ClickHouse HTTP endpoint over chDB, the machine's
// Postgres (a fresh database) and Redis (a fresh key prefix), and separate api and projector
// processes configured as docker-compose.yml configures them.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  createScratchDatabase,
  type ScratchDatabase,
} from '../../libs/storage/scratch-database.ts';
import { type SpawnedEndpoint, spawnClickHouseHttp } from '../clickhouse-http/spawn.ts';
import { type Role, type RoleProcess, startRole } from './role-process.ts';

export interface ClusterOptions {
  api: number;
  projectors: number;
  /** Postgres server to create the cluster's database on. */
  postgresUrl?: string;
  redisUrl?: string;
  /** Settings every role gets on top of the deployment's (e.g. shorter leases in tests). */
  env?: Record<string, string>;
  /** Told each process as it becomes ready. */
  onReady?: (process: { role: Role | 'clickhouse'; url: string; pid: number }) => void;
}

/** The ClickHouse stand-in, restartable on its port and data (a server restart). */
export interface ClusterClickHouse {
  readonly url: string;
  readonly pid: number;
  /** Stops it (SIGTERM, or SIGKILL at once with `kill`) and starts it again on the same port. */
  restart(options?: { kill?: boolean; downMs?: number }): Promise<void>;
  stop(): Promise<void>;
}

export interface Cluster {
  clickhouse: ClusterClickHouse;
  api: RoleProcess[];
  projectors: RoleProcess[];
  /** The variables every role was started with (the deployment's, as compose names them). */
  env: Record<string, string>;
  masterKey: string;
  database: ScratchDatabase;
  /** Starts one more process of `role` on the same engines. */
  add(role: Role): Promise<RoleProcess>;
  /** Stops every process, then drops the database, the Redis keys and the endpoint's data. */
  stop(): Promise<void>;
}

/**
 * The variables docker-compose.yml gives the api and projector services, as compose names them
 * (docker-compose.test.ts holds the two lists together); a key rotation's pass through from this
 * process's environment. Each role also gets CAIRN_ROLE, HOST and PORT (role-process.ts).
 */
export const DEPLOYMENT_VARIABLES = [
  'DATABASE_URL',
  'CLICKHOUSE_URL',
  'REDIS_URL',
  'CAIRN_MASTER_KEY',
  'CAIRN_MASTER_KEY_PREVIOUS',
  'CAIRN_CURSOR_SECRET',
  'CAIRN_CURSOR_SECRET_PREVIOUS',
] as const;

function deploymentEnv(engines: {
  databaseUrl: string;
  clickhouseUrl: string;
  redisUrl: string;
  masterKey: string;
}): Record<string, string> {
  const values: Record<(typeof DEPLOYMENT_VARIABLES)[number], string | undefined> = {
    DATABASE_URL: engines.databaseUrl,
    CLICKHOUSE_URL: engines.clickhouseUrl,
    REDIS_URL: engines.redisUrl,
    CAIRN_MASTER_KEY: engines.masterKey,
    CAIRN_MASTER_KEY_PREVIOUS: process.env.CAIRN_MASTER_KEY_PREVIOUS,
    CAIRN_CURSOR_SECRET: process.env.CAIRN_CURSOR_SECRET,
    CAIRN_CURSOR_SECRET_PREVIOUS: process.env.CAIRN_CURSOR_SECRET_PREVIOUS,
  };
  return Object.fromEntries(
    Object.entries(values).filter((entry): entry is [string, string] => Boolean(entry[1])),
  );
}

/** Variables dev:cluster adds beside the deployment's: each cluster's own corner of shared servers. */
export const CLUSTER_ONLY = ['CAIRN_REDIS_PREFIX', 'DATA_DIR', 'LOG_LEVEL'] as const;

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-cluster-'));
  const postgresUrl =
    options.postgresUrl ??
    process.env.TEST_POSTGRES_URL ??
    'postgres://postgres@127.0.0.1:5432/test';
  const redisUrl = options.redisUrl ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const masterKey = process.env.CAIRN_MASTER_KEY ?? randomBytes(48).toString('base64');
  const prefix = `cairn_cluster_${randomBytes(4).toString('hex')}`;
  const database = await createScratchDatabase(postgresUrl, 'cairn_cluster');
  const started: RoleProcess[] = [];
  let clickhouse: ClusterClickHouse | undefined;
  const stop = async () => {
    await Promise.all(started.map((one) => one.stop()));
    await clickhouse?.stop();
    await database.drop().catch(() => {});
    await dropRedisPrefix(redisUrl, prefix).catch(() => {});
    await fs.rm(root, { recursive: true, force: true });
  };
  try {
    clickhouse = await clusterClickHouse(path.join(root, 'clickhouse'));
    options.onReady?.({ role: 'clickhouse', url: clickhouse.url, pid: clickhouse.pid });
    const env = {
      ...deploymentEnv({
        databaseUrl: database.url,
        clickhouseUrl: clickhouse.url,
        redisUrl,
        masterKey,
      }),
      CAIRN_REDIS_PREFIX: prefix,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      ...options.env,
    };
    let count = 0;
    const add = async (role: Role) => {
      // Each process its own data directory: only the export spool is written there.
      const one = await startRole(role, {
        ...env,
        DATA_DIR: path.join(root, `${role}-${++count}`),
      });
      started.push(one);
      options.onReady?.({ role, url: one.url, pid: one.pid });
      return one;
    };
    // One at a time: the first migrates both databases, the others find them migrated.
    const projectors: RoleProcess[] = [];
    for (let i = 0; i < options.projectors; i++) projectors.push(await add('projector'));
    const api: RoleProcess[] = [];
    for (let i = 0; i < options.api; i++) api.push(await add('api'));
    return { clickhouse, api, projectors, env, masterKey, database, add, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function clusterClickHouse(dataDir: string): Promise<ClusterClickHouse> {
  let endpoint: SpawnedEndpoint = await spawnClickHouseHttp({ dataDir });
  const port = Number(new URL(endpoint.url).port);
  return {
    get url() {
      return endpoint.url;
    },
    get pid() {
      return endpoint.pid;
    },
    async restart({ kill = false, downMs = 0 } = {}) {
      if (kill) endpoint.child.kill('SIGKILL');
      await endpoint.stop();
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
      endpoint = await spawnClickHouseHttp({ dataDir, port });
    },
    stop: () => endpoint.stop(),
  };
}

/** Removes every key of the cluster's prefix from the shared Redis. */
async function dropRedisPrefix(redisUrl: string, prefix: string): Promise<void> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
