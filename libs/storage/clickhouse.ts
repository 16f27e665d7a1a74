import fs from 'node:fs/promises';
import path from 'node:path';
import { type ClickHouseClient, type ClickHouseSettings, createClient } from '@clickhouse/client';
import { tracingOn } from '../tracing/tracing.ts';
import { ChdbSessionSettings } from './chdb-session-settings.ts';
import { clusterStatements } from './clickhouse-cluster-ddl.ts';
import { traceClickHouse } from './clickhouse-tracing.ts';
import { Mutex } from './mutex.ts';
import { OWNER_ONLY_DIR, restrictUmask } from './owner-only.ts';

export interface ClickHouse {
  readonly client: ClickHouseClient;
  readonly kind: 'server' | 'chdb';
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface ClickHouseOptions {
  /** An http(s):// URL for a server (a path names the database); without it, chDB in `dataDir`. */
  url?: string | undefined;
  dataDir?: string;
}

/**
 * Settings sent with every statement. chDB applies settings as session-wide `SET`s that outlive
 * the statement, so every per-statement setting Cairn uses appears here with its neutral value:
 * each statement then starts from the same state on chDB as on a server.
 */
export const BASE_SETTINGS: ClickHouseSettings = {
  // Servers quote 64-bit integers in JSON by default and chDB does not; numbers are what
  // callers want, and Cairn's counts stay far below 2^53.
  output_format_json_quote_64bit_integers: 0,
  date_time_output_format: 'iso',
  date_time_input_format: 'best_effort',
  max_execution_time: 0,
  timeout_overflow_mode: 'throw',
  // Analytics queries set 1 so a server stops a query whose caller has gone away.
  cancel_http_readonly_queries_on_client_close: 0,
  // 0 = no per-query cap (the server-wide limit still applies); analytics queries set their own.
  max_memory_usage: '0',
  insert_deduplication_token: '',
  insert_deduplicate: 1,
  // A retried insert (same token) is dropped by the rollups fed from facts too, not only by facts.
  deduplicate_blocks_in_dependent_materialized_views: 1,
  // Cluster mode: an insert into a Distributed table reaches its shards before it returns, with
  // its deduplication token, so a retried batch is dropped there (clickhouse-cluster-ddl.ts).
  distributed_foreground_insert: 1,
  // The rollup backfill reads a cluster's shards locally ('local'); everything else keeps the default.
  distributed_product_mode: 'deny',
  // The projector's inserts turn it off (projector.ts); everything else runs on the analyzer.
  allow_experimental_analyzer: 1,
  // A business's erasure waits for its deletions on every replica (2); nothing else mutates.
  mutations_sync: '0',
};

export async function openClickHouse(options: ClickHouseOptions): Promise<ClickHouse> {
  if (options.url) {
    const client = createClient({
      url: options.url,
      clickhouse_settings: BASE_SETTINGS,
      request_timeout: 120_000,
    });
    return wrap(client, 'server');
  }
  if (!options.dataDir) throw new Error('Embedded ClickHouse needs a data directory');
  // chDB writes its parts (inserts, merges) in this process, with its umask (owner-only.ts).
  restrictUmask();
  await fs.mkdir(options.dataDir, { recursive: true, mode: OWNER_ONLY_DIR });
  const connection = serialised((await loadChdb()).createChdbConnection({ path: options.dataDir }));
  const client = createClient({
    // chdb brings its own copy of the client's common types; the runtime contract is the same.
    connection: connection as unknown as ClientConnection,
    clickhouse_settings: BASE_SETTINGS,
  });
  return wrap(client, 'chdb');
}

function wrap(engine: ClickHouseClient, kind: ClickHouse['kind']): ClickHouse {
  const client = tracingOn() ? traceClickHouse(engine, kind) : engine;
  return {
    client,
    kind,
    async ping() {
      const result = await client.ping();
      if (!result.success) throw result.error;
    },
    async close() {
      await client.close();
    },
  };
}

/**
 * chDB is an optional dependency (about 540 MB): server deployments install without it
 * (`npm ci --omit=optional`) and talk to ClickHouse over HTTP, so it is loaded only when used.
 */
async function loadChdb(): Promise<typeof import('chdb/connection')> {
  try {
    return await import('chdb/connection');
  } catch (error) {
    throw new Error(
      'Embedded ClickHouse needs the optional package chdb, which is not installed: run `npm install` (without --omit=optional), or set CLICKHOUSE_URL to a ClickHouse server',
      { cause: error },
    );
  }
}

type ChdbConnection = ReturnType<typeof import('chdb/connection')['createChdbConnection']>;
type ClientConnection = NonNullable<NonNullable<Parameters<typeof createClient>[0]>['connection']>;

/**
 * chDB runs one statement at a time anyway, but a statement's `SET` prefix and the statement
 * itself are two steps: without this lock a concurrent call could slip its settings (say, an
 * insert deduplication token) in between. Under the lock each statement sends only the settings
 * the session does not hold already (chdb-session-settings.ts).
 */
function serialised(connection: ChdbConnection): ChdbConnection {
  const mutex = new Mutex();
  const session = new ChdbSessionSettings();
  const locked = ['query', 'exec', 'command', 'insert'] as const;
  return new Proxy(connection, {
    get(target, key) {
      const value = Reflect.get(target, key);
      if (typeof value !== 'function') return value;
      const bound = value.bind(target);
      if (!(locked as readonly PropertyKey[]).includes(key)) return bound;
      return (params: { clickhouse_settings?: ClickHouseSettings }, ...rest: unknown[]) =>
        mutex.run(async () => {
          const changes = session.changes(params.clickhouse_settings);
          try {
            const result = await bound({ ...params, clickhouse_settings: changes }, ...rest);
            session.applied(changes);
            return result;
          } catch (error) {
            session.forget();
            await flushOutput(target);
            throw error;
          }
        });
    },
  });
}

/**
 * A statement that fails after chDB has started writing its output (a memory limit hit while
 * aggregating, say) leaves that partial output in the session, and the next statement's answer
 * arrives with it glued in front. One throwaway statement carries it off.
 */
async function flushOutput(connection: ChdbConnection): Promise<void> {
  try {
    const { stream } = await connection.query({ query: 'SELECT 1 FORMAT TabSeparated' } as never);
    for await (const _ of stream) {
      // drained and discarded
    }
  } catch {
    // The next statement will report whatever is wrong with the session.
  }
}

export const CLICKHOUSE_MIGRATIONS_DIR = path.resolve(import.meta.dirname, '../../sql/clickhouse');

/**
 * Applies `sql/clickhouse/NNNN_*.sql` in order; each file is one idempotent DDL statement. With
 * `cluster`, each becomes its replicated and distributed form (clickhouse-cluster-ddl.ts).
 */
export async function migrateClickHouse(
  client: ClickHouseClient,
  dir = CLICKHOUSE_MIGRATIONS_DIR,
  cluster?: string,
): Promise<string[]> {
  const names = (await fs.readdir(dir)).filter((name) => /^\d{4}_[\w-]+\.sql$/.test(name)).sort();
  const files = await Promise.all(
    names.map(async (name) => ({ name, text: await fs.readFile(path.join(dir, name), 'utf8') })),
  );
  const statements = cluster ? clusterStatements(files, cluster) : files.map((file) => [file.text]);
  for (const query of statements.flat()) await client.command({ query });
  return names;
}
