import fs from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { POSTGRES_DEFAULTS, type PostgresTimeouts } from '../config/config.ts';
import { tracingOn } from '../tracing/tracing.ts';
import type { Database } from './database.ts';
import { OWNER_ONLY_DIR, restrictUmask } from './owner-only.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import { lockDataDir } from './pglite-lock.ts';
import { OwnerOnlyNodeFS } from './pglite-owner-only.ts';
import { boundedClient, waitLimit } from './postgres-bounded-client.ts';
import { type ListenHandlers, type Listening, listenOnServer } from './postgres-listen.ts';
import { SharedConnections, SharedReadsDialect } from './postgres-shared-reads.ts';
import { traceStatements } from './postgres-tracing.ts';

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
  /**
   * PGlite only (undefined on a server): `read` runs and the data directory is copied as a
   * gzipped tarball while this process holds PGlite's one session, so no other statement runs
   * and no transaction is open in between: what `read` saw is exactly what the copy holds.
   */
  readonly snapshot?: <T>(
    read: (db: Kysely<Database>) => Promise<T>,
  ) => Promise<{ read: T; tarball: Blob }>;
  close(): Promise<void>;
}

export interface PostgresOptions {
  /** A postgres:// URL for a server; without it, PGlite keeps its files in `dataDir`. */
  url?: string | undefined;
  dataDir?: string;
  /** PGlite only: a new `dataDir` starts from this tarball (`snapshot`'s) instead of initdb. */
  loadDataDir?: Blob;
  poolSize?: number;
  // Unset, the three below take config's defaults (POSTGRES_DEFAULTS), as a caller without a
  // Config (a test, a bench) wants them.
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

export async function openPostgres(options: PostgresOptions): Promise<Postgres> {
  // Before the lock file and PGlite's files are written (owner-only.ts).
  if (!options.url && options.dataDir) restrictUmask();
  // One process per embedded data directory (see pglite-lock.ts); the CLI relies on this.
  const unlock =
    !options.url && options.dataDir ? await lockDataDir(`${options.dataDir}.lock`) : undefined;
  const pglite = options.url ? undefined : await openPGlite(options.dataDir, options.loadDataDir);
  const dialect = pglite ? new PGliteDialect(pglite) : serverDialect(options);
  const db = new Kysely<Database>({
    dialect,
    ...(tracingOn() ? { log: traceStatements('postgresql') } : {}),
  });
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
    snapshot: pglite
      ? (read) =>
          db.connection().execute(async (session) => {
            const seen = await read(session);
            // Written out first, the copy needs no WAL replay when it is opened.
            await sql`checkpoint`.execute(session);
            return { read: seen, tarball: await pglite.dumpDataDir('gzip') };
          })
      : undefined,
    async close() {
      await db.destroy();
      await unlock?.();
    },
  };
}

/** Kysely's dialect for a server: a pool, and the shared connections unless configured off. */
function serverDialect(options: PostgresOptions): PostgresDialect {
  const url = options.url as string;
  const timeouts = options.timeouts ?? POSTGRES_DEFAULTS.timeouts;
  const Client = boundedClient(timeouts, options.prepare ?? POSTGRES_DEFAULTS.prepare);
  const pool = createPool(url, options.poolSize ?? 10, timeouts, Client);
  const shared = options.sharedConnections ?? POSTGRES_DEFAULTS.sharedConnections;
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

async function openPGlite(dataDir: string | undefined, loadDataDir?: Blob): Promise<PGlite> {
  if (dataDir) await fs.mkdir(dataDir, { recursive: true, mode: OWNER_ONLY_DIR });
  // Extensions the migrations create must be bundled here; a server has them from contrib.
  return PGlite.create({
    ...(dataDir ? { fs: new OwnerOnlyNodeFS(dataDir) } : {}),
    parsers: pgParsers,
    extensions: { pg_trgm },
    ...(loadDataDir ? { loadDataDir } : {}),
  });
}
