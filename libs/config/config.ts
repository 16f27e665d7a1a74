import path from 'node:path';
import { MIN_SECRET_LENGTH, secretProblem } from './secret-strength.ts';

export type Role = 'all' | 'api' | 'projector';

export interface Config {
  readonly role: Role;
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  /** Which engines run inside this process (no URL configured for them). */
  readonly embedded: {
    readonly postgres: boolean;
    readonly clickhouse: boolean;
    readonly queue: boolean;
  };
  /** Where the embedded engines keep their files: PGlite and chDB each own one directory. */
  readonly dataPaths: { readonly postgres: string; readonly clickhouse: string };
  /** Unset means the embedded stand-in: PGlite under `dataDir/pg`. */
  readonly databaseUrl: string | undefined;
  /** Unset means the embedded stand-in: chDB under `dataDir/ch`. */
  readonly clickhouseUrl: string | undefined;
  /**
   * A ClickHouse cluster name from the server's remote_servers: migrations then create
   * replicated tables ON CLUSTER with Distributed tables over them. Needs CLICKHOUSE_URL.
   */
  readonly clickhouseCluster: string | undefined;
  /** Unset means the in-process queue. */
  readonly redisUrl: string | undefined;
  /** Key prefix for everything Cairn keeps in Redis, so several deployments can share one server. */
  readonly redisPrefix: string;
  /** Time limit and circuit breaker of Redis on the request path (rate limits, wake-ups). */
  readonly redisLimits: RedisLimits;
  readonly masterKey: string | undefined;
  /**
   * The master key being rotated out: still accepted by the token endpoints, and what cursors
   * and kept idempotent answers were sealed with, until it is unset. Needs CAIRN_MASTER_KEY.
   */
  readonly masterKeyPrevious: string | undefined;
  /**
   * Key material for signing pagination cursors. Unset: derived from the master key, or from a
   * secret generated once and kept in Postgres, so every instance signs alike.
   */
  readonly cursorSecret: string | undefined;
  /** The cursor secret being rotated out: cursors it sealed still open; new ones never use it. */
  readonly cursorSecretPrevious: string | undefined;
  readonly queryMaxRows: number;
  /** Row cap of one CSV or NDJSON export of a query, which streams rather than being held. */
  readonly exportMaxRows: number;
  /** Exports one principal may be downloading at once; the next is refused 429. @defaultValue 2 */
  readonly exportConcurrencyPerPrincipal: number;
  /**
   * Requests per minute one embed token may make (its chart page and answers), a budget of its
   * own apart from API tokens and addresses. @defaultValue 300
   */
  readonly embedRateLimit: number;
  /** Series `GET /metrics/views` serves at most; those past it are left out. @defaultValue 1000 */
  readonly viewMetricsMaxSeries: number;
  /** A view scraped as gauges is answered at most once per this many seconds. @defaultValue 60 */
  readonly viewMetricsIntervalS: number;
  /**
   * Where an export's file waits for its reader once the engine has answered, so no engine slot
   * is held at a client's pace (files owner-only, unlinked as soon as they are opened).
   * @defaultValue `DATA_DIR/spool`
   */
  readonly spoolDir: string;
  /**
   * A response that makes no write progress (its reader stopped reading) for this long is cut.
   * @defaultValue 30000
   */
  readonly sendIdleTimeoutMs: number;
  /**
   * Whether a CSV export writes a label that starts like a spreadsheet formula (`=`, `+`, `-`,
   * `@`, tab, CR) with a leading `'`, so a spreadsheet shows it as text. One setting per process.
   * @defaultValue true
   */
  readonly csvFormulaEscape: boolean;
  /**
   * Time budget of one analytics query, every statement of it together. Embedded chDB runs one
   * statement at a time and cannot interrupt it, so it also caps one statement there at half the
   * queue wait: another caller's query waits behind at most one such statement.
   * @defaultValue 10000
   */
  readonly queryTimeoutMs: number;
  readonly staleAfterMs: number;
  /** Per-query memory cap ClickHouse enforces (`max_memory_usage`), in bytes. */
  readonly queryMaxMemoryBytes: number;
  /** Analytics queries running at once, all callers together (embedded chDB runs one at a time). */
  readonly queryConcurrency: number;
  /** Analytics queries one principal may have running at once. */
  readonly queryConcurrencyPerPrincipal: number;
  /** Analytics queries one principal may have waiting beyond those running; more are refused. */
  readonly queryQueuePerPrincipal: number;
  /**
   * How long a query may wait for admission before it is refused. Twice the time budget unless
   * set, so a query waiting behind one that spends its whole budget is not refused as it ends.
   * @defaultValue 2 × queryTimeoutMs
   */
  readonly queryQueueWaitMs: number;
  /** Byte bound of the analytics result cache; 0 turns the cache off. */
  readonly queryCacheBytes: number;
  /** How often the projector looks for unprojected facts when nothing woke it. */
  readonly projectorPollMs: number;
  /**
   * The most facts one insert carries (a backlog's batch). Every insert pays the rollup views a
   * fixed price, so 20,000 costs about 30 % less CPU per fact than 5,000 once rollups are on;
   * batches stay as small as what is ready otherwise. @defaultValue 20000
   */
  readonly projectorBatchSize: number;
  /** After a batch smaller than the batch size, how long the projector gathers before the next. */
  readonly projectorLingerMs: number;
  /**
   * Lifetime of the projector lease: one projector process projects at a time, and a standby
   * takes over within about this long (plus a quarter of it) after the leader dies.
   * @defaultValue 10000
   */
  readonly projectorLeaseMs: number;
  /**
   * Days a fact stays in the outbox after it has been projected (0: removed as soon as it is);
   * ClickHouse's facts keep it, and a rebuild reads it from there.
   */
  readonly outboxRetentionDays: number;
  readonly logLevel: string;
  /**
   * How long a SIGTERM waits for accepted requests, the running query and the projector's batch
   * before the process exits 1 anyway. Under Kubernetes' default 30 s grace. @defaultValue 25000
   */
  readonly shutdownTimeoutMs: number;
  /** Browser origins allowed to call the API (CORS); `*` allows any. Empty: none. */
  readonly corsOrigins: readonly string[];
  /** Every Postgres time limit, so a hung or lost server costs a bounded wait. */
  readonly postgresTimeouts: PostgresTimeouts;
  /**
   * Statements with parameters run as named prepared statements on a Postgres server. Off for a
   * pooler in transaction mode that does not carry them between connections. @defaultValue true
   */
  readonly postgresPrepare: boolean;
  /**
   * Pipelined connections that statements outside a transaction share, besides the pool that
   * transactions use; 0 sends every statement through the pool (a pooler that cannot pipeline).
   * @defaultValue 1
   */
  readonly postgresSharedConnections: number;
  /** The largest answer kept for an Idempotency-Key replay, as JSON bytes. @defaultValue 262144 */
  readonly idempotencyMaxResponseBytes: number;
  /**
   * Idempotency-Key answers of `/query` kept per principal; past it the oldest go first, and a
   * retry with an evicted key runs the query again. @defaultValue 1000
   */
  readonly idempotencyQueryMaxKeys: number;
  /** The same bound in bytes of kept answers per principal. @defaultValue 16777216 */
  readonly idempotencyQueryMaxBytes: number;
  /**
   * How deep page-number task lists go: a page is served while page × per_page stays within this
   * many tasks, and totals are counted up to it, so no page costs a scan of a whole business.
   * Past it a list answers 422 pointing to narrower filters. @defaultValue 10000
   */
  readonly taskListMaxDepth: number;
  /** Limits on client connections, so slow or numerous clients cannot hold the server. */
  readonly httpLimits: HttpLimits;
  /** Process-wide runtime tricks, one switch each (libs/runtime/index.ts says why and where). */
  readonly runtime: RuntimeSwitches;
  /**
   * OpenTelemetry traces, from the standard `OTEL_*` variables. Undefined when no OTLP endpoint
   * is set (or `OTEL_SDK_DISABLED=true`, or `OTEL_TRACES_EXPORTER=none`): no SDK starts then.
   */
  readonly tracing: TracingConfig | undefined;
}

export interface TracingConfig {
  /** Where spans are POSTed (OTLP/HTTP): `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as is, or `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`. */
  readonly url: string;
  /** `OTEL_EXPORTER_OTLP_HEADERS` (or `…_TRACES_HEADERS`): `name=value` pairs, comma-separated. */
  readonly headers: Readonly<Record<string, string>>;
  /** `OTEL_SERVICE_NAME`, else `cairn`. */
  readonly serviceName: string;
  /** `OTEL_RESOURCE_ATTRIBUTES`: `key=value` pairs. */
  readonly resourceAttributes: Readonly<Record<string, string>>;
  /** `OTEL_TRACES_SAMPLER`. @defaultValue 'parentbased_always_on' */
  readonly sampler: TraceSampler;
  /** `OTEL_TRACES_SAMPLER_ARG` for the ratio samplers, 0 to 1. @defaultValue 1 */
  readonly samplerRatio: number;
  /** `OTEL_BSP_SCHEDULE_DELAY`: how long finished spans gather before they are sent. @defaultValue 5000 */
  readonly exportDelayMs: number;
  /** `OTEL_EXPORTER_OTLP_PROTOCOL` (or `…_TRACES_PROTOCOL`): the body of each export. @defaultValue 'http/json' */
  readonly protocol: OtlpProtocol;
}

export type OtlpProtocol = 'http/json' | 'http/protobuf';

export type TraceSampler =
  | 'always_on'
  | 'always_off'
  | 'traceidratio'
  | 'parentbased_always_on'
  | 'parentbased_always_off'
  | 'parentbased_traceidratio';

const SAMPLERS: readonly TraceSampler[] = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
];

/** `auto`: applied on the Node versions where the trick was measured to help; `on`/`off`: forced. */
export type RuntimeSwitch = 'auto' | 'on' | 'off';

export interface RuntimeSwitches {
  /** Young-generation collection after each body over 64 KiB (sets `--expose-gc`). @defaultValue 'auto' */
  readonly youngCollection: RuntimeSwitch;
  /** Requests and responses born on Express's prototypes. @defaultValue 'auto' */
  readonly expressMessages: RuntimeSwitch;
}

export interface PostgresTimeouts {
  /** Opening a connection. @defaultValue 5000 */
  readonly connectMs: number;
  /**
   * One statement, enforced by the server and, a fixed grace later (`CLIENT_GRACE_MS` in
   * libs/storage/postgres-deadline.ts), by the client, for a server that answers nothing at all.
   * @defaultValue 5000
   */
  readonly statementMs: number;
  /** A transaction left idle by its client is rolled back by the server. @defaultValue 10000 */
  readonly idleInTransactionMs: number;
  /** Waiting for a pooled connection while all are busy. @defaultValue 5000 */
  readonly acquireMs: number;
}

export interface RedisLimits {
  /** One Redis command for rate limits or a projector wake-up. @defaultValue 500 */
  readonly commandTimeoutMs: number;
  /** Failures (errors or timeouts) in a row that open a Redis circuit breaker. @defaultValue 3 */
  readonly breakerFailures: number;
  /** How long an open breaker fails calls at once before it lets one try Redis. @defaultValue 5000 */
  readonly breakerCoolDownMs: number;
}

export interface HttpLimits {
  /** Until the request headers are in. @defaultValue 10000 */
  readonly headersTimeoutMs: number;
  /** Until the whole request, body included, is in. @defaultValue 30000 */
  readonly requestTimeoutMs: number;
  /**
   * The keep-alive window announced to clients (`Keep-Alive: timeout=…`); an idle connection is
   * closed a second after it, and only if no request has arrived on it. @defaultValue 5000
   */
  readonly keepAliveTimeoutMs: number;
  /**
   * Connections the server holds at most. When it is full, the address holding the most makes
   * room with its slowest connection that may go: one with part of a request head waiting for
   * the rest, fresh and silent for a second, or idle past the keep-alive window. A new
   * connection is refused only when none may go. @defaultValue 1000
   */
  readonly maxConnections: number;
  /**
   * Connections one client address holds at most (at most `maxConnections`); one more is
   * refused at once. IPv4 addresses (also as `::ffff:a.b.c.d`) count one by one, public IPv6
   * addresses by /64. Behind a reverse proxy every client has the proxy's address: raise it to
   * `maxConnections` there. @defaultValue 100
   */
  readonly maxConnectionsPerAddress: number;
}

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
    connectMs: 5_000,
    statementMs: 5_000,
    idleInTransactionMs: 10_000,
    acquireMs: 5_000,
  }),
  prepare: true,
  // One server process keeps pace with one event loop; more only spreads the wake-ups.
  sharedConnections: 1,
});

/** The master key derives the cursor key: it must carry at least this much. */
export const MIN_MASTER_KEY_LENGTH = MIN_SECRET_LENGTH;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

const ROLES: readonly Role[] = ['all', 'api', 'projector'];
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * Reads every setting Cairn has from the environment, once. Collects all problems before
 * failing so an operator fixes them in one go.
 */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return Number(raw);
  };
  /** A switch spelled `yes` or `no` (`on`/`off`, or `true`/`false` where a contract says so). */
  const either = (name: string, fallback: boolean, [yes, no]: [string, string]): boolean => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (raw === yes || raw === no) return raw === yes;
    problems.push(`${name} must be ${yes} or ${no} (got "${raw}")`);
    return fallback;
  };
  const toggle = (name: string, fallback: boolean) => either(name, fallback, ['on', 'off']);
  const runtimeSwitch = (name: string): RuntimeSwitch => {
    const raw = read(name) ?? 'auto';
    if (raw === 'auto' || raw === 'on' || raw === 'off') return raw;
    problems.push(`${name} must be auto, on or off (got "${raw}")`);
    return 'auto';
  };
  const url = (name: string, protocols: string[]): string | undefined => {
    const raw = read(name);
    if (raw === undefined) return undefined;
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) {
        problems.push(`${name} must start with ${protocols.map((p) => `${p}//`).join(' or ')}`);
      }
    } catch {
      problems.push(`${name} is not a valid URL`);
    }
    return raw;
  };

  const roleRaw = read('CAIRN_ROLE') ?? 'all';
  if (!ROLES.includes(roleRaw as Role)) {
    problems.push(`CAIRN_ROLE must be one of ${ROLES.join(', ')} (got "${roleRaw}")`);
  }
  const role = roleRaw as Role;
  const databaseUrl = url('DATABASE_URL', ['postgres:', 'postgresql:']);
  const clickhouseUrl = url('CLICKHOUSE_URL', ['http:', 'https:']);
  const redisUrl = url('REDIS_URL', ['redis:', 'rediss:']);
  if (role !== 'all') {
    const missing = [
      ['DATABASE_URL', databaseUrl],
      ['CLICKHOUSE_URL', clickhouseUrl],
      ['REDIS_URL', redisUrl],
    ]
      .filter(([, value]) => value === undefined)
      .map(([name]) => name);
    if (missing.length > 0) {
      problems.push(
        `CAIRN_ROLE=${role} needs ${missing.join(', ')}: embedded engines live inside one process, so split roles need real servers`,
      );
    }
  }
  // Refused by name, never echoed: a secret does not belong in a start-up log.
  const secret = (name: string): string | undefined => {
    const value = read(name);
    const problem = value === undefined ? undefined : secretProblem(name, value);
    if (problem !== undefined) problems.push(problem);
    return value;
  };
  const masterKey = secret('CAIRN_MASTER_KEY');
  const masterKeyPrevious = secret('CAIRN_MASTER_KEY_PREVIOUS');
  if (masterKeyPrevious !== undefined && masterKey === undefined) {
    problems.push(
      'CAIRN_MASTER_KEY_PREVIOUS needs CAIRN_MASTER_KEY: a rotation accepts the previous key beside a new one',
    );
  }
  const cursorSecret = secret('CAIRN_CURSOR_SECRET');
  const cursorSecretPrevious = secret('CAIRN_CURSOR_SECRET_PREVIOUS');
  const clickhouseCluster = read('CLICKHOUSE_CLUSTER');
  if (clickhouseCluster !== undefined) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(clickhouseCluster)) {
      problems.push(
        `CLICKHOUSE_CLUSTER must be a cluster name of letters, digits and _ (got "${clickhouseCluster}")`,
      );
    }
    if (clickhouseUrl === undefined) {
      problems.push(
        'CLICKHOUSE_CLUSTER needs CLICKHOUSE_URL: embedded ClickHouse is a single node',
      );
    }
  }
  const corsOrigins = (read('CAIRN_CORS_ORIGINS') ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
  for (const origin of corsOrigins) {
    if (origin !== '*' && !isOrigin(origin)) {
      problems.push(
        `CAIRN_CORS_ORIGINS entries must be origins like https://dash.example.com (no path), or * (got "${origin}")`,
      );
    }
  }
  const logLevel = read('LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  }

  const tracing = tracingConfig(
    read,
    url,
    problems,
    integer('OTEL_BSP_SCHEDULE_DELAY', 5_000, 1, 600_000),
  );

  const dataDir = path.resolve(read('DATA_DIR') ?? './.data');
  const queryTimeoutMs = integer('CAIRN_QUERY_TIMEOUT_MS', 10_000, 1, 600_000);
  const pgTimeouts = POSTGRES_DEFAULTS.timeouts;
  const config: Config = {
    role,
    host: read('HOST') ?? '127.0.0.1',
    port: integer('PORT', 8080, 0, 65535),
    dataDir,
    embedded: {
      postgres: databaseUrl === undefined,
      clickhouse: clickhouseUrl === undefined,
      queue: redisUrl === undefined,
    },
    dataPaths: { postgres: path.join(dataDir, 'pg'), clickhouse: path.join(dataDir, 'ch') },
    databaseUrl,
    clickhouseUrl,
    clickhouseCluster,
    redisUrl,
    redisPrefix: read('CAIRN_REDIS_PREFIX') ?? 'cairn',
    redisLimits: Object.freeze({
      commandTimeoutMs: integer('CAIRN_REDIS_COMMAND_TIMEOUT_MS', 500, 10, 60_000),
      breakerFailures: integer('CAIRN_REDIS_BREAKER_FAILURES', 3, 1, 1_000),
      breakerCoolDownMs: integer('CAIRN_REDIS_BREAKER_COOLDOWN_MS', 5_000, 100, 600_000),
    }),
    masterKey,
    masterKeyPrevious,
    cursorSecret,
    cursorSecretPrevious,
    queryMaxRows: integer('CAIRN_QUERY_MAX_ROWS', 10_000, 1, 1_000_000),
    exportMaxRows: integer('CAIRN_EXPORT_MAX_ROWS', 1_000_000, 1, 100_000_000),
    exportConcurrencyPerPrincipal: integer('CAIRN_EXPORT_CONCURRENCY_PER_PRINCIPAL', 2, 1, 1_000),
    embedRateLimit: integer('CAIRN_EMBED_RATE_LIMIT', 300, 1, 1_000_000),
    viewMetricsMaxSeries: integer('CAIRN_VIEW_METRICS_MAX_SERIES', 1000, 1, 1_000_000),
    viewMetricsIntervalS: integer('CAIRN_VIEW_METRICS_INTERVAL_S', 60, 1, 86_400),
    spoolDir: path.resolve(read('CAIRN_SPOOL_DIR') ?? path.join(dataDir, 'spool')),
    sendIdleTimeoutMs: integer('CAIRN_SEND_IDLE_TIMEOUT_MS', 30_000, 100, 3_600_000),
    csvFormulaEscape: either('CAIRN_CSV_FORMULA_ESCAPE', true, ['true', 'false']),
    queryTimeoutMs,
    staleAfterMs: integer('CAIRN_STALE_AFTER_MS', 5_000, 0, 86_400_000),
    queryMaxMemoryBytes: integer('CAIRN_QUERY_MAX_MEMORY_BYTES', 1_073_741_824, 1_048_576, 2 ** 50),
    queryConcurrency: integer('CAIRN_QUERY_CONCURRENCY', 8, 1, 1_000),
    queryConcurrencyPerPrincipal: integer('CAIRN_QUERY_CONCURRENCY_PER_PRINCIPAL', 2, 1, 1_000),
    queryQueuePerPrincipal: integer('CAIRN_QUERY_QUEUE_PER_PRINCIPAL', 8, 0, 10_000),
    queryQueueWaitMs: integer('CAIRN_QUERY_QUEUE_WAIT_MS', 2 * queryTimeoutMs, 1, 1_200_000),
    queryCacheBytes: integer('CAIRN_QUERY_CACHE_BYTES', 67_108_864, 0, 2 ** 40),
    projectorPollMs: integer('CAIRN_PROJECTOR_POLL_MS', 500, 10, 60_000),
    projectorBatchSize: integer('CAIRN_PROJECTOR_BATCH_SIZE', 20_000, 1, 100_000),
    projectorLingerMs: integer('CAIRN_PROJECTOR_LINGER_MS', 500, 0, 10_000),
    projectorLeaseMs: integer('CAIRN_PROJECTOR_LEASE_MS', 10_000, 1_000, 600_000),
    outboxRetentionDays: integer('CAIRN_OUTBOX_RETENTION_DAYS', 7, 0, 36_500),
    logLevel,
    shutdownTimeoutMs: integer('CAIRN_SHUTDOWN_TIMEOUT_MS', 25_000, 1_000, 3_600_000),
    corsOrigins: Object.freeze(corsOrigins),
    postgresTimeouts: Object.freeze({
      connectMs: integer('CAIRN_PG_CONNECT_TIMEOUT_MS', pgTimeouts.connectMs, 100, 600_000),
      statementMs: integer('CAIRN_PG_STATEMENT_TIMEOUT_MS', pgTimeouts.statementMs, 100, 600_000),
      idleInTransactionMs: integer(
        'CAIRN_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS',
        pgTimeouts.idleInTransactionMs,
        100,
        600_000,
      ),
      acquireMs: integer('CAIRN_PG_ACQUIRE_TIMEOUT_MS', pgTimeouts.acquireMs, 100, 600_000),
    }),
    postgresPrepare: toggle('CAIRN_PG_PREPARE', POSTGRES_DEFAULTS.prepare),
    postgresSharedConnections: integer(
      'CAIRN_PG_SHARED_CONNECTIONS',
      POSTGRES_DEFAULTS.sharedConnections,
      0,
      64,
    ),
    idempotencyMaxResponseBytes: integer(
      'CAIRN_IDEMPOTENCY_MAX_RESPONSE_BYTES',
      262_144,
      1_024,
      16_777_216,
    ),
    idempotencyQueryMaxKeys: integer('CAIRN_IDEMPOTENCY_QUERY_MAX_KEYS', 1_000, 1, 1_000_000),
    idempotencyQueryMaxBytes: integer(
      'CAIRN_IDEMPOTENCY_QUERY_MAX_BYTES',
      16_777_216,
      1_024,
      2 ** 40,
    ),
    taskListMaxDepth: integer('CAIRN_TASK_LIST_MAX_DEPTH', 10_000, 100, 1_000_000),
    httpLimits: Object.freeze({
      headersTimeoutMs: integer('CAIRN_HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000),
      requestTimeoutMs: integer('CAIRN_HTTP_REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000),
      keepAliveTimeoutMs: integer('CAIRN_HTTP_KEEPALIVE_TIMEOUT_MS', 5_000, 100, 600_000),
      maxConnections: integer('CAIRN_HTTP_MAX_CONNECTIONS', 1_000, 1, 1_000_000),
      maxConnectionsPerAddress: integer(
        'CAIRN_HTTP_MAX_CONNECTIONS_PER_ADDRESS',
        100,
        1,
        1_000_000,
      ),
    }),
    runtime: Object.freeze({
      youngCollection: runtimeSwitch('CAIRN_RUNTIME_YOUNG_COLLECTION'),
      expressMessages: runtimeSwitch('CAIRN_RUNTIME_EXPRESS_MESSAGES'),
    }),
    tracing,
  };
  if (problems.length > 0) {
    throw new ConfigError(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
  return Object.freeze(config);
}

/** The OTLP/HTTP exporter's settings as the OpenTelemetry specification names them. */
function tracingConfig(
  read: (name: string) => string | undefined,
  url: (name: string, protocols: string[]) => string | undefined,
  problems: string[],
  exportDelayMs: number,
): TracingConfig | undefined {
  const base = url('OTEL_EXPORTER_OTLP_ENDPOINT', ['http:', 'https:']);
  const traces = url('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', ['http:', 'https:']);
  const disabled = read('OTEL_SDK_DISABLED')?.toLowerCase() === 'true';
  const exporter = read('OTEL_TRACES_EXPORTER') ?? 'otlp';
  if (exporter !== 'otlp' && exporter !== 'none') {
    problems.push(`OTEL_TRACES_EXPORTER must be otlp or none (got "${exporter}")`);
  }
  const sampler = (read('OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on') as TraceSampler;
  if (!SAMPLERS.includes(sampler)) {
    problems.push(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')} (got "${sampler}")`);
  }
  const ratioRaw = read('OTEL_TRACES_SAMPLER_ARG');
  const ratio = ratioRaw === undefined ? 1 : Number(ratioRaw);
  if (!(ratio >= 0 && ratio <= 1)) {
    problems.push(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 (got "${ratioRaw}")`);
  }
  // Cairn speaks OTLP over HTTP only; `grpc` would need a transport it does not ship.
  const protocol = (read('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ??
    read('OTEL_EXPORTER_OTLP_PROTOCOL') ??
    'http/json') as OtlpProtocol;
  if (protocol !== 'http/json' && protocol !== 'http/protobuf') {
    problems.push(
      `OTEL_EXPORTER_OTLP_PROTOCOL must be http/json or http/protobuf (got "${protocol}")`,
    );
  }
  const headers = pairs(
    read('OTEL_EXPORTER_OTLP_TRACES_HEADERS') ?? read('OTEL_EXPORTER_OTLP_HEADERS'),
    'OTEL_EXPORTER_OTLP_HEADERS',
    problems,
  );
  const resourceAttributes = pairs(
    read('OTEL_RESOURCE_ATTRIBUTES'),
    'OTEL_RESOURCE_ATTRIBUTES',
    problems,
  );
  if (disabled || exporter === 'none' || (base === undefined && traces === undefined)) {
    return undefined;
  }
  return Object.freeze({
    url: traces ?? `${(base as string).replace(/\/+$/, '')}/v1/traces`,
    headers: Object.freeze(headers),
    serviceName: read('OTEL_SERVICE_NAME') ?? 'cairn',
    resourceAttributes: Object.freeze(resourceAttributes),
    sampler,
    samplerRatio: ratio,
    exportDelayMs,
    protocol,
  });
}

/** The W3C Baggage-like `k=v,k2=v2` lists of the OTEL_* variables, values percent-decoded. */
function pairs(text: string | undefined, name: string, problems: string[]): Record<string, string> {
  const found: Record<string, string> = {};
  for (const part of (text ?? '').split(',')) {
    if (part.trim() === '') continue;
    const at = part.indexOf('=');
    const key = at > 0 ? part.slice(0, at).trim() : '';
    if (key === '') {
      problems.push(`${name} must be key=value pairs separated by commas`);
      continue;
    }
    try {
      found[key] = decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      problems.push(`${name} has a value that is not valid percent-encoding (key "${key}")`);
    }
  }
  return found;
}

function isOrigin(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text;
  } catch {
    return false;
  }
}
