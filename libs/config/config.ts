import path from 'node:path';
import { AREAS } from './areas.ts';
import { readVariables } from './read-variables.ts';
import { MIN_SECRET_LENGTH } from './secret-strength.ts';
import { type TracingConfig, tracingConfig } from './tracing-config.ts';
import { literalDefault, type Reader, type Variable } from './variable.ts';
import {
  CAIRN_CSV_FORMULA_ESCAPE,
  CAIRN_EMBED_RATE_LIMIT,
  CAIRN_EXPORT_CONCURRENCY_PER_PRINCIPAL,
  CAIRN_EXPORT_MAX_ROWS,
  CAIRN_QUERY_CACHE_BYTES,
  CAIRN_QUERY_CONCURRENCY,
  CAIRN_QUERY_CONCURRENCY_PER_PRINCIPAL,
  CAIRN_QUERY_MAX_MEMORY_BYTES,
  CAIRN_QUERY_MAX_ROWS,
  CAIRN_QUERY_QUEUE_PER_PRINCIPAL,
  CAIRN_QUERY_QUEUE_WAIT_MS,
  CAIRN_QUERY_TIMEOUT_MS,
  CAIRN_SEND_IDLE_TIMEOUT_MS,
  CAIRN_SPOOL_DIR,
  CAIRN_STALE_AFTER_MS,
  CAIRN_VIEW_METRICS_INTERVAL_S,
  CAIRN_VIEW_METRICS_MAX_SERIES,
} from './variables/analytics.ts';
import {
  CLICKHOUSE_CLUSTER,
  CLICKHOUSE_URL,
  DATABASE_URL,
  REDIS_URL,
} from './variables/engines.ts';
import {
  CAIRN_CORS_ORIGINS,
  CAIRN_HTTP_HEADERS_TIMEOUT_MS,
  CAIRN_HTTP_KEEPALIVE_TIMEOUT_MS,
  CAIRN_HTTP_MAX_CONNECTIONS,
  CAIRN_HTTP_MAX_CONNECTIONS_PER_ADDRESS,
  CAIRN_HTTP_REQUEST_TIMEOUT_MS,
  CAIRN_IDEMPOTENCY_MAX_RESPONSE_BYTES,
  CAIRN_IDEMPOTENCY_QUERY_MAX_BYTES,
  CAIRN_IDEMPOTENCY_QUERY_MAX_KEYS,
  CAIRN_TASK_LIST_MAX_DEPTH,
} from './variables/http.ts';
import {
  CAIRN_PG_ACQUIRE_TIMEOUT_MS,
  CAIRN_PG_CONNECT_TIMEOUT_MS,
  CAIRN_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS,
  CAIRN_PG_PREPARE,
  CAIRN_PG_SHARED_CONNECTIONS,
  CAIRN_PG_STATEMENT_TIMEOUT_MS,
} from './variables/postgres.ts';
import {
  CAIRN_ROLE,
  CAIRN_SHUTDOWN_TIMEOUT_MS,
  DATA_DIR,
  HOST,
  LOG_LEVEL,
  PORT,
} from './variables/process.ts';
import {
  CAIRN_OUTBOX_RETENTION_DAYS,
  CAIRN_PROJECTOR_BATCH_SIZE,
  CAIRN_PROJECTOR_LEASE_MS,
  CAIRN_PROJECTOR_LINGER_MS,
  CAIRN_PROJECTOR_POLL_MS,
} from './variables/projector.ts';
import {
  CAIRN_REDIS_BREAKER_COOLDOWN_MS,
  CAIRN_REDIS_BREAKER_FAILURES,
  CAIRN_REDIS_COMMAND_TIMEOUT_MS,
  CAIRN_REDIS_PREFIX,
} from './variables/redis.ts';
import {
  CAIRN_RUNTIME_EXPRESS_MESSAGES,
  CAIRN_RUNTIME_YOUNG_COLLECTION,
} from './variables/runtime.ts';
import {
  CAIRN_CURSOR_SECRET,
  CAIRN_CURSOR_SECRET_PREVIOUS,
  CAIRN_MASTER_KEY,
  CAIRN_MASTER_KEY_PREVIOUS,
} from './variables/secrets.ts';

export type { OtlpProtocol, TraceSampler, TracingConfig } from './tracing-config.ts';

/**
 * Which variable each setting of Config is. A field's default, bounds and meaning are in its
 * variable's declaration (libs/config/variables/), the one place they are written.
 */
const SETTINGS = {
  role: CAIRN_ROLE,
  host: HOST,
  port: PORT,
  dataDir: DATA_DIR,
  databaseUrl: DATABASE_URL,
  clickhouseUrl: CLICKHOUSE_URL,
  clickhouseCluster: CLICKHOUSE_CLUSTER,
  redisUrl: REDIS_URL,
  redisPrefix: CAIRN_REDIS_PREFIX,
  redisLimits: {
    commandTimeoutMs: CAIRN_REDIS_COMMAND_TIMEOUT_MS,
    breakerFailures: CAIRN_REDIS_BREAKER_FAILURES,
    breakerCoolDownMs: CAIRN_REDIS_BREAKER_COOLDOWN_MS,
  },
  masterKey: CAIRN_MASTER_KEY,
  masterKeyPrevious: CAIRN_MASTER_KEY_PREVIOUS,
  cursorSecret: CAIRN_CURSOR_SECRET,
  cursorSecretPrevious: CAIRN_CURSOR_SECRET_PREVIOUS,
  queryMaxRows: CAIRN_QUERY_MAX_ROWS,
  exportMaxRows: CAIRN_EXPORT_MAX_ROWS,
  exportConcurrencyPerPrincipal: CAIRN_EXPORT_CONCURRENCY_PER_PRINCIPAL,
  embedRateLimit: CAIRN_EMBED_RATE_LIMIT,
  viewMetricsMaxSeries: CAIRN_VIEW_METRICS_MAX_SERIES,
  viewMetricsIntervalS: CAIRN_VIEW_METRICS_INTERVAL_S,
  spoolDir: CAIRN_SPOOL_DIR,
  sendIdleTimeoutMs: CAIRN_SEND_IDLE_TIMEOUT_MS,
  csvFormulaEscape: CAIRN_CSV_FORMULA_ESCAPE,
  queryTimeoutMs: CAIRN_QUERY_TIMEOUT_MS,
  staleAfterMs: CAIRN_STALE_AFTER_MS,
  queryMaxMemoryBytes: CAIRN_QUERY_MAX_MEMORY_BYTES,
  queryConcurrency: CAIRN_QUERY_CONCURRENCY,
  queryConcurrencyPerPrincipal: CAIRN_QUERY_CONCURRENCY_PER_PRINCIPAL,
  queryQueuePerPrincipal: CAIRN_QUERY_QUEUE_PER_PRINCIPAL,
  queryQueueWaitMs: CAIRN_QUERY_QUEUE_WAIT_MS,
  queryCacheBytes: CAIRN_QUERY_CACHE_BYTES,
  projectorPollMs: CAIRN_PROJECTOR_POLL_MS,
  projectorBatchSize: CAIRN_PROJECTOR_BATCH_SIZE,
  projectorLingerMs: CAIRN_PROJECTOR_LINGER_MS,
  projectorLeaseMs: CAIRN_PROJECTOR_LEASE_MS,
  outboxRetentionDays: CAIRN_OUTBOX_RETENTION_DAYS,
  logLevel: LOG_LEVEL,
  shutdownTimeoutMs: CAIRN_SHUTDOWN_TIMEOUT_MS,
  corsOrigins: CAIRN_CORS_ORIGINS,
  postgresTimeouts: {
    connectMs: CAIRN_PG_CONNECT_TIMEOUT_MS,
    statementMs: CAIRN_PG_STATEMENT_TIMEOUT_MS,
    idleInTransactionMs: CAIRN_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    acquireMs: CAIRN_PG_ACQUIRE_TIMEOUT_MS,
  },
  postgresPrepare: CAIRN_PG_PREPARE,
  postgresSharedConnections: CAIRN_PG_SHARED_CONNECTIONS,
  idempotencyMaxResponseBytes: CAIRN_IDEMPOTENCY_MAX_RESPONSE_BYTES,
  idempotencyQueryMaxKeys: CAIRN_IDEMPOTENCY_QUERY_MAX_KEYS,
  idempotencyQueryMaxBytes: CAIRN_IDEMPOTENCY_QUERY_MAX_BYTES,
  taskListMaxDepth: CAIRN_TASK_LIST_MAX_DEPTH,
  httpLimits: {
    headersTimeoutMs: CAIRN_HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: CAIRN_HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: CAIRN_HTTP_KEEPALIVE_TIMEOUT_MS,
    maxConnections: CAIRN_HTTP_MAX_CONNECTIONS,
    maxConnectionsPerAddress: CAIRN_HTTP_MAX_CONNECTIONS_PER_ADDRESS,
  },
  // Process-wide runtime tricks, one switch each (libs/runtime/index.ts says why and where).
  runtime: {
    youngCollection: CAIRN_RUNTIME_YOUNG_COLLECTION,
    expressMessages: CAIRN_RUNTIME_EXPRESS_MESSAGES,
  },
};

/** The values of a tree of variables, each group frozen. */
type Values<S> = {
  readonly [K in keyof S]: S[K] extends Variable<infer T> ? T : Values<S[K]>;
};

type Settings = Values<typeof SETTINGS>;

export interface Config extends Settings {
  /** Which engines run inside this process (no URL configured for them). */
  readonly embedded: {
    readonly postgres: boolean;
    readonly clickhouse: boolean;
    readonly queue: boolean;
  };
  /** Where the embedded engines keep their files: PGlite and chDB each own one directory. */
  readonly dataPaths: { readonly postgres: string; readonly clickhouse: string };
  /** OpenTelemetry traces; undefined when tracing is off, and then no SDK starts. */
  readonly tracing: TracingConfig | undefined;
}

export type Role = Config['role'];
export type RuntimeSwitch = Config['runtime']['youngCollection'];
export type RuntimeSwitches = Config['runtime'];
export type PostgresTimeouts = Config['postgresTimeouts'];
export type RedisLimits = Config['redisLimits'];
export type HttpLimits = Config['httpLimits'];

/**
 * The Postgres settings an unset variable leaves: loadConfig's, and those of a caller opening
 * Postgres without a Config (a test, a bench, a script).
 */
export const POSTGRES_DEFAULTS: {
  readonly timeouts: PostgresTimeouts;
  readonly prepare: boolean;
  readonly sharedConnections: number;
} = Object.freeze({
  timeouts: Object.freeze({
    connectMs: literalDefault(CAIRN_PG_CONNECT_TIMEOUT_MS),
    statementMs: literalDefault(CAIRN_PG_STATEMENT_TIMEOUT_MS),
    idleInTransactionMs: literalDefault(CAIRN_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS),
    acquireMs: literalDefault(CAIRN_PG_ACQUIRE_TIMEOUT_MS),
  }),
  prepare: literalDefault(CAIRN_PG_PREPARE),
  sharedConnections: literalDefault(CAIRN_PG_SHARED_CONNECTIONS),
});

/** The master key derives the cursor key: it must carry at least this much. */
export const MIN_MASTER_KEY_LENGTH = MIN_SECRET_LENGTH;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const DECLARED = AREAS.flatMap((area) => area.variables);

/**
 * Reads every setting Cairn has from the environment, once. Collects all problems before
 * failing so an operator fixes them in one go.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const { read, problems } = readVariables(DECLARED, env);
  const settings = valuesOf(SETTINGS, read);
  if (problems.length > 0) {
    throw new ConfigError(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
  const config: Config = {
    ...settings,
    embedded: {
      postgres: settings.databaseUrl === undefined,
      clickhouse: settings.clickhouseUrl === undefined,
      queue: settings.redisUrl === undefined,
    },
    dataPaths: {
      postgres: path.join(settings.dataDir, 'pg'),
      clickhouse: path.join(settings.dataDir, 'ch'),
    },
    tracing: tracingConfig(read),
  };
  return Object.freeze(config);
}

function valuesOf<S extends object>(tree: S, read: Reader): Values<S> {
  const entries = Object.entries(tree).map(([key, node]) => [
    key,
    'parse' in node ? read(node as Variable<unknown>) : Object.freeze(valuesOf(node, read)),
  ]);
  return Object.fromEntries(entries) as Values<S>;
}
