import fs from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { PostgresTimeouts } from '../config/config.ts';
import type { Database } from './database.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import { lockDataDir } from './pglite-lock.ts';
import { type ListenHandlers, type Listening, listenOnServer } from './postgres-listen.ts';
import { SharedConnections, SharedReadsDialect } from './postgres-shared-reads.ts';

export type { ListenHandlers, Listening };

import { pgParsers } from './postgres-types.ts';

export interface Postgres {
  readonly db: Kysely<Database>;
  readonly kind: 'postgres' | 'pglite';
  ping(): Promise<void>;
  /**
   * Subscribes to `NOTIFY channel`. `onState` says whether notifications are being received:
   * on a server the listening connection can drop, and whatever was notified meanwhile is lost,
   * so a subscriber must not rely on anything it learned before a `false`.
   */
  listen(channel: string, handlers: ListenHandlers): Promise<Listening>;
  close(): Promise<void>;
}

export interface PostgresOptions {
  /** A postgres:// URL for a server; without it, PGlite keeps its files in `dataDir`. */
  url?: string | undefined;
  dataDir?: string;
  poolSize?: number;
  /** Time limits for a server (config.postgresTimeouts); PGlite runs in process and has none. */
  timeouts?: PostgresTimeouts | undefined;
  /** Server statements with parameters run as named prepared statements (config.postgresPrepare). */
  prepare?: boolean | undefined;
  /**
   * Pipelined connections that statements outside a transaction share (config.
   * postgresSharedConnections); 0 sends each through the pool.
   */
  sharedConnections?: number | undefined;
}

/** One server process keeps pace with one event loop; more only spreads the wake-ups. */
const DEFAULT_SHARED_CONNECTIONS = 1;

/** What a server connection waits for at most, unless configured otherwise. */
export const DEFAULT_POSTGRES_TIMEOUTS: PostgresTimeouts = {
  connectMs: 5_000,
  statementMs: 5_000,
  idleInTransactionMs: 10_000,
  acquireMs: 5_000,
};

/**
 * How much longer than the server's statement timeout the client waits before giving up: a
 * stopped or partitioned server is answered within the statement timeout and this grace, with
 * room left for the answer itself inside a second.
 */
const CLIENT_GRACE_MS = 500;

/**
 * Waiting for a connection (from the pool, or a new one to a server that accepts TCP but never
 * answers) never takes longer than a statement may: a frozen server costs a caller no more than
 * the statement timeout, whatever step it froze at.
 */
const waitLimit = (limitMs: number, timeouts: PostgresTimeouts) =>
  Math.min(limitMs, timeouts.statementMs);

export async function openPostgres(options: PostgresOptions): Promise<Postgres> {
  // One process per embedded data directory (see pglite-lock.ts); the CLI relies on this.
  const unlock =
    !options.url && options.dataDir ? await lockDataDir(`${options.dataDir}.lock`) : undefined;
  const pglite = options.url ? undefined : await openPGlite(options.dataDir);
  const dialect = pglite ? new PGliteDialect(pglite) : serverDialect(options);
  const db = new Kysely<Database>({ dialect });
  return {
    db,
    kind: pglite ? 'pglite' : 'postgres',
    async ping() {
      await sql`select 1`.execute(db);
    },
    async listen(channel, handlers) {
      if (pglite) {
        // One in-process session: nothing can drop between the notifier and the listener.
        const unlisten = await pglite.listen(channel, handlers.onNotify);
        handlers.onState(true);
        // Closing after the database itself closed has nothing left to undo.
        return { close: () => unlisten().catch(() => {}) };
      }
      return listenOnServer(options.url as string, channel, handlers);
    },
    async close() {
      await db.destroy();
      await unlock?.();
    },
  };
}

/** Kysely's dialect for a server: a pool, and the shared connections unless configured off. */
function serverDialect(options: PostgresOptions): PostgresDialect {
  const url = options.url as string;
  const timeouts = options.timeouts ?? DEFAULT_POSTGRES_TIMEOUTS;
  const Client = boundedClient(timeouts, options.prepare ?? true);
  const pool = createPool(url, options.poolSize ?? 10, timeouts, Client);
  const shared = options.sharedConnections ?? DEFAULT_SHARED_CONNECTIONS;
  if (shared === 0) return new PostgresDialect({ pool });
  return new SharedReadsDialect(
    { pool },
    // Each shared connection listens for its own errors (postgres-shared-reads.ts).
    new SharedConnections(shared, () => new Client({ connectionString: url, types: PG_TYPES })),
  );
}

const PG_TYPES = {
  getTypeParser: ((oid: number, format?: string) =>
    pgParsers[oid] ??
    pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

function createPool(
  url: string,
  max: number,
  timeouts: PostgresTimeouts,
  Client: typeof pg.Client,
): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    // pg-pool waits this long for a free connection; each Client below has its own connect limit.
    connectionTimeoutMillis: waitLimit(timeouts.acquireMs, timeouts),
    Client,
    types: PG_TYPES,
  });
  // An idle client losing its server (restart, failover) must not crash the process; the pool
  // drops it and the next query gets a fresh connection.
  pool.on('error', () => {});
  // A checked-out client (inside a transaction) that loses its server emits 'error' too, and
  // with no listener that is an uncaught exception that kills the process; the query in flight
  // already rejects with the same error, so listening is enough.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  return pool;
}

/**
 * A pg Client whose every statement is bounded twice: by the server (`statement_timeout`,
 * `idle_in_transaction_session_timeout`), and by the client a little later for a server that
 * answers nothing at all (stopped, partitioned). When the client gives up, it destroys the
 * connection: a later statement must never reach a server that may still hold the earlier one,
 * and a transaction whose COMMIT was never sent is rolled back by the server when it notices.
 */
function boundedClient(timeouts: PostgresTimeouts, prepare: boolean): typeof pg.Client {
  const readLimitMs = timeouts.statementMs + CLIENT_GRACE_MS;
  return class BoundedClient extends pg.Client {
    private timedOut: Error | undefined;

    constructor(config: pg.ClientConfig) {
      super({
        ...config,
        connectionTimeoutMillis: waitLimit(timeouts.connectMs, timeouts),
        statement_timeout: timeouts.statementMs,
        idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
        // Statements queued together are written together (a held BEGIN and the first
        // statement of its transaction); Kysely otherwise sends one at a time per connection.
        pipeline: true,
      });
    }

    /** A transaction's BEGIN not sent yet: it goes out with the transaction's first statement. */
    private beginHeld: string | undefined;

    // biome-ignore lint/suspicious/noExplicitAny: pg's query has a dozen overloads; this wraps them all.
    override query(...args: any[]): any {
      if (this.timedOut) return Promise.reject(this.timedOut);
      if (isBegin(args)) {
        this.beginHeld = args[0];
        return Promise.resolve(BEGUN);
      }
      const begin = this.beginHeld;
      if (begin === undefined) return this.send(args);
      this.beginHeld = undefined;
      // Both in one write: pipeline mode sends the statement without waiting for BEGIN's answer.
      const stream = this.socket();
      stream.cork();
      let begun: Promise<unknown>;
      let result: Promise<unknown>;
      try {
        begun = this.send([begin]);
        result = this.send(args);
      } finally {
        stream.uncork();
      }
      // A BEGIN that failed explains the statement's failure: report it, not what followed.
      return begun.then(
        () => result,
        (error: unknown) => {
          result.catch(() => {});
          throw error;
        },
      );
    }

    // biome-ignore lint/suspicious/noExplicitAny: see query.
    private send(args: any[]): any {
      const named = prepare ? preparedForm(args) : undefined;
      // biome-ignore lint/suspicious/noExplicitAny: see query.
      const query = super.query as (...a: any[]) => any;
      const sent = named ? [named] : args;
      // Kysely sends text and values. A caller's own callback or Query object (a cursor) would
      // go around the read limit below, so it is refused rather than left unbounded.
      if (sent.some((arg) => typeof arg === 'function') || typeof sent[0]?.submit === 'function') {
        return Promise.reject(
          new TypeError('Statements go through Kysely: text and values, no callback or cursor'),
        );
      }
      // The client's own read limit and a callback handed over with the statement, rather than
      // pg's promise and its `query_timeout`: both of those give the Query its callback after
      // constructing it, and V8 then keeps every result's rows alive through young-generation
      // collections (about a quarter of what a page of dependents allocates, promoted, on Node
      // 20, 22 and 24; test/pg-row-promotion.test.ts).
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          const error = new Error('Query read timeout');
          this.timedOut = error;
          reject(error);
          // The server may still hold the statement: nothing else may follow it on this
          // connection. Every statement queued behind it fails with the connection.
          this.socket().destroy();
        }, readLimitMs);
        query.call(this, ...sent, (error: Error | null, answer: unknown) => {
          clearTimeout(timer);
          if (error) reject(error);
          else resolve(answer);
        });
      });
    }

    private socket(): { cork(): void; uncork(): void; destroy(): void } {
      return (this as unknown as { connection: { stream: ReturnType<BoundedClient['socket']> } })
        .connection.stream;
    }
  } as unknown as typeof pg.Client;
}

/**
 * A transaction's opening statement, as Kysely sends it. Its answer carries nothing, so the
 * client answers it at once and sends it with the transaction's first statement: one round trip
 * less for every write, and still nothing commits unless a COMMIT follows the statement's answer
 * (a connection dropped before that rolls the whole transaction back).
 */
const isBegin = (args: unknown[]): args is [string, ...unknown[]] =>
  typeof args[0] === 'string' &&
  /^(?:begin|start transaction\b[\w ]*)$/i.test(args[0]) &&
  (args[1] === undefined || (Array.isArray(args[1]) && args[1].length === 0)) &&
  args.length <= 2;

const BEGUN = { command: 'BEGIN', rowCount: null, rows: [], fields: [] };

/**
 * Kysely sends `query(text, values)`. A statement with parameters goes as a named prepared
 * statement instead, so the server parses it once per connection and can keep its plan: the same
 * few statement shapes run thousands of times a second, and parsing and planning them each time
 * was most of the server's CPU for a page of dependents. Names are handed out for a bounded
 * number of texts (statements built with a varying number of values are many), so no connection
 * keeps more than that many; any text beyond runs unnamed as before, and so does a select list
 * with a star (see STAR).
 */
function preparedForm(args: unknown[]): pg.QueryConfig | undefined {
  const [text, values] = args;
  if (args.length !== 2 || typeof text !== 'string' || !Array.isArray(values)) return undefined;
  if (values.length === 0) return undefined;
  let name = statementNames.get(text);
  if (name === undefined) {
    // Checked once per text: a named text has passed them already.
    if (text.length > MAX_PREPARED_TEXT || STAR.test(text)) return undefined;
    if (statementNames.size >= MAX_PREPARED_STATEMENTS) return undefined;
    name = `cairn_${statementNames.size + 1}`;
    statementNames.set(text, name);
  }
  return { name, text, values };
}

/**
 * `*` or `t.*` in a select or returning list: a prepared statement keeps the columns it
 * expanded to, and after a migration adds a column Postgres refuses to run it ("cached plan
 * must not change result type") until the connection ends. Such statements run unnamed;
 * `count(*)` is no star.
 */
const STAR = /(?:\.|\b(?:select|returning)\s+|,\s*)\*/i;
const MAX_PREPARED_STATEMENTS = 256;
const MAX_PREPARED_TEXT = 16_384;
/** One name per statement text, for the whole process: pg refuses a name reused for other text. */
const statementNames = new Map<string, string>();

async function openPGlite(dataDir: string | undefined): Promise<PGlite> {
  if (dataDir) await fs.mkdir(path.dirname(dataDir), { recursive: true });
  // Extensions the migrations create must be bundled here; a server has them from contrib.
  return PGlite.create(dataDir, { parsers: pgParsers, extensions: { pg_trgm } });
}
