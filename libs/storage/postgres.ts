import fs from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './database.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import { lockDataDir } from './pglite-lock.ts';
import { listenOnServer } from './postgres-listen.ts';
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

export interface ListenHandlers {
  onNotify(payload: string): void;
  onState(receiving: boolean): void;
}

export interface Listening {
  close(): Promise<void>;
}

export interface PostgresOptions {
  /** A postgres:// URL for a server; without it, PGlite keeps its files in `dataDir`. */
  url?: string | undefined;
  dataDir?: string;
  poolSize?: number;
}

export async function openPostgres(options: PostgresOptions): Promise<Postgres> {
  // One process per embedded data directory (see pglite-lock.ts); the CLI relies on this.
  const unlock =
    !options.url && options.dataDir ? await lockDataDir(`${options.dataDir}.lock`) : undefined;
  const pglite = options.url ? undefined : await openPGlite(options.dataDir);
  const dialect = pglite
    ? new PGliteDialect(pglite)
    : new PostgresDialect({ pool: createPool(options.url as string, options.poolSize ?? 10) });
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

function createPool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        pgParsers[oid] ??
        pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
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

async function openPGlite(dataDir: string | undefined): Promise<PGlite> {
  if (dataDir) await fs.mkdir(path.dirname(dataDir), { recursive: true });
  return PGlite.create(dataDir, { parsers: pgParsers });
}
