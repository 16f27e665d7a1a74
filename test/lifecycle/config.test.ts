import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../libs/config/config.ts';

describe('loadConfig', () => {
  it('applies the documented defaults and freezes the result', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      role: 'all',
      host: '127.0.0.1',
      port: 8080,
      dataDir: path.resolve('.data'),
      databaseUrl: undefined,
      clickhouseUrl: undefined,
      redisUrl: undefined,
      queryMaxRows: 10_000,
      queryTimeoutMs: 10_000,
      // Twice the budget: a query waiting behind one that spends its whole budget still runs.
      queryQueueWaitMs: 20_000,
      staleAfterMs: 5_000,
      projectorLingerMs: 500,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('waits twice the query budget by default, on every ClickHouse', () => {
    expect(loadConfig({ CLICKHOUSE_URL: 'http://ch:8123' })).toMatchObject({
      queryTimeoutMs: 10_000,
      queryQueueWaitMs: 20_000,
    });
    expect(loadConfig({ CAIRN_QUERY_TIMEOUT_MS: '3000' })).toMatchObject({
      queryTimeoutMs: 3_000,
      queryQueueWaitMs: 6_000,
    });
    expect(
      loadConfig({ CAIRN_QUERY_TIMEOUT_MS: '3000', CAIRN_QUERY_QUEUE_WAIT_MS: '1000' }),
    ).toMatchObject({ queryTimeoutMs: 3_000, queryQueueWaitMs: 1_000 });
  });

  it('reads every engine URL and limit', () => {
    const config = loadConfig({
      CAIRN_ROLE: 'api',
      DATABASE_URL: 'postgres://u@db:5432/cairn',
      CLICKHOUSE_URL: 'http://ch:8123',
      REDIS_URL: 'redis://redis:6379',
      CAIRN_QUERY_MAX_ROWS: '50',
      CAIRN_QUERY_TIMEOUT_MS: '2500',
      CAIRN_STALE_AFTER_MS: '0',
      HOST: '0.0.0.0',
      PORT: '9000',
    });
    expect(config).toMatchObject({
      role: 'api',
      host: '0.0.0.0',
      port: 9000,
      databaseUrl: 'postgres://u@db:5432/cairn',
      clickhouseUrl: 'http://ch:8123',
      redisUrl: 'redis://redis:6379',
      queryMaxRows: 50,
      queryTimeoutMs: 2500,
      staleAfterMs: 0,
    });
  });

  it('refuses split roles on embedded engines, naming what is missing', () => {
    expect(() => loadConfig({ CAIRN_ROLE: 'api' })).toThrow(ConfigError);
    expect(() => loadConfig({ CAIRN_ROLE: 'projector', DATABASE_URL: 'postgres://x/y' })).toThrow(
      /CAIRN_ROLE=projector needs CLICKHOUSE_URL, REDIS_URL/,
    );
  });

  it('switches each runtime trick auto, on or off, auto by default', () => {
    expect(loadConfig({}).runtime).toEqual({ youngCollection: 'auto', expressMessages: 'auto' });
    expect(
      loadConfig({ CAIRN_RUNTIME_YOUNG_COLLECTION: 'off', CAIRN_RUNTIME_EXPRESS_MESSAGES: 'on' })
        .runtime,
    ).toEqual({ youngCollection: 'off', expressMessages: 'on' });
    expect(() => loadConfig({ CAIRN_RUNTIME_EXPRESS_MESSAGES: 'yes' })).toThrow(
      /CAIRN_RUNTIME_EXPRESS_MESSAGES must be auto, on or off \(got "yes"\)/,
    );
  });

  it('reports every bad value at once', () => {
    let message = '';
    try {
      loadConfig({
        CAIRN_ROLE: 'web',
        PORT: 'eighty',
        DATABASE_URL: 'mysql://x',
        CAIRN_QUERY_MAX_ROWS: '0',
      });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('CAIRN_ROLE must be one of all, api, projector');
    expect(message).toContain('PORT must be a whole number');
    expect(message).toContain('DATABASE_URL must start with postgres:// or postgresql://');
    expect(message).toContain('CAIRN_QUERY_MAX_ROWS must be a whole number from 1');
  });
  it('reads CAIRN_CSV_FORMULA_ESCAPE as true or false, on by default', () => {
    expect(loadConfig({}).csvFormulaEscape).toBe(true);
    expect(loadConfig({ CAIRN_CSV_FORMULA_ESCAPE: 'false' }).csvFormulaEscape).toBe(false);
    expect(loadConfig({ CAIRN_CSV_FORMULA_ESCAPE: 'true' }).csvFormulaEscape).toBe(true);
    expect(() => loadConfig({ CAIRN_CSV_FORMULA_ESCAPE: 'no' })).toThrow(
      /CAIRN_CSV_FORMULA_ESCAPE must be true or false \(got "no"\)/,
    );
  });

  it('refuses a master key shorter than 32 characters, since the cursor key derives from it', () => {
    expect(() => loadConfig({ CAIRN_MASTER_KEY: 'short-key' })).toThrow(
      /CAIRN_MASTER_KEY must be at least 32 characters/,
    );
    // 32 random characters: test/auth/secrets.test.ts holds what counts as weak.
    const key = 'jE0tDuydOAnSD0BS6MX65RWHgO-5k6vL';
    expect(key).toHaveLength(32);
    expect(loadConfig({ CAIRN_MASTER_KEY: key }).masterKey).toBe(key);
  });

  it('names every secret that fails the strength check in one message, echoing none', () => {
    const spaced = 'Xk2#pQ9vL7mZ4wR8 tN6yB3cF5hJ1sD0g';
    let message = '';
    try {
      loadConfig({
        CAIRN_MASTER_KEY: spaced,
        CAIRN_CURSOR_SECRET: 'thisismysupersecretmasterkeyforcairn',
      });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('CAIRN_MASTER_KEY holds whitespace');
    expect(message).toMatch(/CAIRN_CURSOR_SECRET is too weak: it is made of /);
    expect(message).not.toContain(spaced.slice(0, 8));
    expect(message).not.toContain('supersecret');
  });

  it('reads every Postgres and HTTP time limit in one place', () => {
    const config = loadConfig({
      CAIRN_PG_CONNECT_TIMEOUT_MS: '1500',
      CAIRN_PG_STATEMENT_TIMEOUT_MS: '2500',
      CAIRN_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS: '3500',
      CAIRN_PG_ACQUIRE_TIMEOUT_MS: '4500',
      CAIRN_HTTP_HEADERS_TIMEOUT_MS: '1000',
      CAIRN_HTTP_REQUEST_TIMEOUT_MS: '2000',
      CAIRN_HTTP_KEEPALIVE_TIMEOUT_MS: '3000',
      CAIRN_HTTP_MAX_CONNECTIONS: '40',
      CAIRN_HTTP_MAX_CONNECTIONS_PER_ADDRESS: '8',
    });
    expect(config.postgresTimeouts).toEqual({
      connectMs: 1500,
      statementMs: 2500,
      idleInTransactionMs: 3500,
      acquireMs: 4500,
    });
    expect(config.httpLimits).toEqual({
      headersTimeoutMs: 1000,
      requestTimeoutMs: 2000,
      keepAliveTimeoutMs: 3000,
      maxConnections: 40,
      maxConnectionsPerAddress: 8,
    });
    expect(loadConfig({}).httpLimits.maxConnectionsPerAddress).toBe(100);
    expect(() => loadConfig({ CAIRN_PG_STATEMENT_TIMEOUT_MS: '1e3' })).toThrow(ConfigError);
  });

  it('prepares Postgres statements unless told off, and names any other value', () => {
    expect(loadConfig({}).postgresPrepare).toBe(true);
    expect(loadConfig({ CAIRN_PG_PREPARE: 'off' }).postgresPrepare).toBe(false);
    expect(loadConfig({ CAIRN_PG_PREPARE: 'on' }).postgresPrepare).toBe(true);
    expect(() => loadConfig({ CAIRN_PG_PREPARE: 'no' })).toThrow(
      /CAIRN_PG_PREPARE must be on or off \(got "no"\)/,
    );
  });

  it('shares one pipelined Postgres connection for reads unless told otherwise', () => {
    expect(loadConfig({}).postgresSharedConnections).toBe(1);
    expect(loadConfig({ CAIRN_PG_SHARED_CONNECTIONS: '0' }).postgresSharedConnections).toBe(0);
    expect(loadConfig({ CAIRN_PG_SHARED_CONNECTIONS: '4' }).postgresSharedConnections).toBe(4);
    expect(() => loadConfig({ CAIRN_PG_SHARED_CONNECTIONS: '-1' })).toThrow(
      /CAIRN_PG_SHARED_CONNECTIONS/,
    );
    expect(() => loadConfig({ CAIRN_PG_SHARED_CONNECTIONS: 'two' })).toThrow(ConfigError);
  });

  it('bounds page-number task lists at 10,000 tasks deep unless told otherwise', () => {
    expect(loadConfig({}).taskListMaxDepth).toBe(10_000);
    expect(loadConfig({ CAIRN_TASK_LIST_MAX_DEPTH: '500' }).taskListMaxDepth).toBe(500);
    // Below the largest per_page, page 1 itself would be out of reach.
    expect(() => loadConfig({ CAIRN_TASK_LIST_MAX_DEPTH: '99' })).toThrow(
      /CAIRN_TASK_LIST_MAX_DEPTH must be a whole number from 100 to 1000000/,
    );
  });

  it('bounds the /query answers kept for Idempotency-Key per principal unless told otherwise', () => {
    expect(loadConfig({})).toMatchObject({
      idempotencyQueryMaxKeys: 1_000,
      idempotencyQueryMaxBytes: 16_777_216,
    });
    expect(
      loadConfig({
        CAIRN_IDEMPOTENCY_QUERY_MAX_KEYS: '20',
        CAIRN_IDEMPOTENCY_QUERY_MAX_BYTES: '65536',
      }),
    ).toMatchObject({ idempotencyQueryMaxKeys: 20, idempotencyQueryMaxBytes: 65_536 });
    expect(() => loadConfig({ CAIRN_IDEMPOTENCY_QUERY_MAX_KEYS: '0' })).toThrow(
      /CAIRN_IDEMPOTENCY_QUERY_MAX_KEYS/,
    );
    expect(() => loadConfig({ CAIRN_IDEMPOTENCY_QUERY_MAX_BYTES: '1kb' })).toThrow(
      /CAIRN_IDEMPOTENCY_QUERY_MAX_BYTES/,
    );
  });

  it('reads the Redis command timeout and circuit breaker settings', () => {
    expect(loadConfig({}).redisLimits).toEqual({
      commandTimeoutMs: 500,
      breakerFailures: 3,
      breakerCoolDownMs: 5000,
    });
    const config = loadConfig({
      CAIRN_REDIS_COMMAND_TIMEOUT_MS: '200',
      CAIRN_REDIS_BREAKER_FAILURES: '5',
      CAIRN_REDIS_BREAKER_COOLDOWN_MS: '1000',
    });
    expect(config.redisLimits).toEqual({
      commandTimeoutMs: 200,
      breakerFailures: 5,
      breakerCoolDownMs: 1000,
    });
    expect(() => loadConfig({ CAIRN_REDIS_BREAKER_FAILURES: '0' })).toThrow(
      /CAIRN_REDIS_BREAKER_FAILURES/,
    );
  });

  it('names the refused LOG_LEVEL', () => {
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(
      /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent \(got "loud"\)/,
    );
  });

  it('reads a general OTLP setting only while its traces-only variable is unset', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    const both = loadConfig({
      ...endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_HEADERS: '=broken',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-team=ops',
    });
    expect(both.tracing).toMatchObject({ protocol: 'http/protobuf', headers: { 'x-team': 'ops' } });
    expect(loadConfig({ ...endpoint, OTEL_EXPORTER_OTLP_HEADERS: 'a=1' }).tracing?.headers).toEqual(
      {
        a: '1',
      },
    );
    expect(() => loadConfig({ ...endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' })).toThrow(
      /OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be http\/json or http\/protobuf \(got "grpc"\)/,
    );
  });
});
