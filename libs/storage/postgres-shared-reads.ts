import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  PostgresDialect,
  type PostgresDialectConfig,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import type pg from 'pg';

/**
 * How long a shared connection's oldest statement may have been on the wire before new
 * statements stop queueing behind it and take a pool connection of their own instead. Short
 * statements queued behind each other stay well under it; it bounds what one slow statement
 * (a large search, a count over many tasks) costs the reads sent after it.
 */
const STALLED_MS = 100;

/**
 * A statement that took the server longer than this the last time it ran goes to the pool, so
 * it never sits in front of short ones; one that took less comes back to a shared connection.
 * A page of dependents takes well under a millisecond; a walk of a large graph, a name search
 * matching many tasks or a count over many takes tens to hundreds.
 */
const SLOW_MS = 10;
/** Statement texts whose time is kept (they come from a few shapes each); others count as short. */
const MAX_TIMED_TEXTS = 1_024;

/**
 * Kysely's Postgres dialect with statements outside a transaction sent down shared, pipelined
 * connections (Npgsql calls this multiplexing) instead of each checking a pool connection out
 * and back in. On a pool, every concurrent read wakes its own server process and waits for it;
 * pipelined, one process works through the statements queued on its connection without
 * sleeping between them, and their answers arrive together. One Node process has one event
 * loop, and one server process keeps pace with it: on two cores shared with Postgres, pages of
 * dependents went from 1,030–1,170 to 1,420–2,210 a second (README, "Dependents and task
 * creation").
 *
 * A transaction still gets a connection of its own from the pool for its whole life: the
 * driver learns of it from Kysely's `beginTransaction`, never by reading the SQL. A statement
 * queued behind a slow one waits for it, so a shared connection whose oldest statement has run
 * for more than `STALLED_MS` takes no more: when every one is in that state, statements go to
 * the pool as before. A statement that took more than `SLOW_MS` the last time goes to the pool
 * from the start.
 */
export class SharedReadsDialect extends PostgresDialect {
  readonly #shared: SharedConnections;

  constructor(config: PostgresDialectConfig, shared: SharedConnections) {
    super(config);
    this.#shared = shared;
  }

  override createDriver(): Driver {
    return new SharedReadsDriver(super.createDriver(), this.#shared);
  }
}

class SharedReadsDriver implements Driver {
  private readonly pool: Driver;
  private readonly shared: SharedConnections;

  constructor(pool: Driver, shared: SharedConnections) {
    this.pool = pool;
    this.shared = shared;
  }

  init(): Promise<void> {
    return this.pool.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new DeferredConnection(this.pool, this.shared);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings) {
    await this.pool.beginTransaction(await pinned(connection), settings);
  }

  async commitTransaction(connection: DatabaseConnection) {
    await this.pool.commitTransaction(await pinned(connection));
  }

  async rollbackTransaction(connection: DatabaseConnection) {
    await this.pool.rollbackTransaction(await pinned(connection));
  }

  async releaseConnection(connection: DatabaseConnection) {
    const own = (connection as DeferredConnection).release();
    if (own) await this.pool.releaseConnection(own);
  }

  async destroy() {
    await this.shared.close();
    await this.pool.destroy();
  }
}

const pinned = (connection: DatabaseConnection) => (connection as DeferredConnection).pin();

/**
 * What Kysely holds between acquiring and releasing a connection: nothing until a transaction
 * begins on it (then a pool connection, kept to the end), the shared connections otherwise.
 */
class DeferredConnection implements DatabaseConnection {
  #own: DatabaseConnection | undefined;
  private readonly pool: Driver;
  private readonly shared: SharedConnections;

  constructor(pool: Driver, shared: SharedConnections) {
    this.pool = pool;
    this.shared = shared;
  }

  async pin(): Promise<DatabaseConnection> {
    this.#own ??= await this.pool.acquireConnection();
    return this.#own;
  }

  release(): DatabaseConnection | undefined {
    const own = this.#own;
    this.#own = undefined;
    return own;
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.#own) return this.#own.executeQuery(query);
    const connection = this.shared.slow(query.sql) ? undefined : this.shared.pick();
    return connection ? connection.run<R>(query, this.shared) : this.onPool(query);
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number) {
    yield* (await this.pin()).streamQuery<R>(query, chunkSize);
  }

  /** A slow statement, or every shared connection held up by one: a pool connection. */
  private async onPool<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const connection = await this.pool.acquireConnection();
    const sent = performance.now();
    try {
      return await connection.executeQuery<R>(query);
    } finally {
      this.shared.took(query.sql, performance.now() - sent);
      await this.pool.releaseConnection(connection);
    }
  }
}

/** Pipelined connections, opened when first needed and replaced when they end. */
export class SharedConnections {
  readonly #slots: Array<SharedConnection | undefined>;
  readonly #open: () => pg.Client;
  /** How long each statement text took the server the last time it ran, in ms. */
  readonly #took = new Map<string, number>();
  #closed = false;

  constructor(count: number, open: () => pg.Client) {
    this.#slots = new Array(count).fill(undefined);
    this.#open = open;
  }

  /** The least busy connection not held up, opening any missing one; none if all are held up. */
  pick(): SharedConnection | undefined {
    if (this.#closed) return undefined;
    const now = performance.now();
    let best: SharedConnection | undefined;
    for (let at = 0; at < this.#slots.length; at += 1) {
      let slot = this.#slots[at];
      if (slot === undefined || slot.ended) {
        slot = new SharedConnection(this.#open());
        this.#slots[at] = slot;
      }
      if (slot.stalled(now)) continue;
      if (best === undefined || slot.inFlight < best.inFlight) best = slot;
      if (best.inFlight === 0) break;
    }
    return best;
  }

  /** Whether `text` took longer than `SLOW_MS` the last time: it then runs on the pool. */
  slow(text: string): boolean {
    return (this.#took.get(text) ?? 0) > SLOW_MS;
  }

  took(text: string, ms: number): void {
    if (this.#took.size >= MAX_TIMED_TEXTS && !this.#took.has(text)) return;
    this.#took.set(text, ms);
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#slots.map((slot) => slot?.close()));
  }
}

class SharedConnection {
  /** When each statement on the wire was sent, oldest first: they are answered in order. */
  readonly #sent: number[] = [];
  readonly #client: pg.Client;
  #lastAnswer = 0;
  ended = false;

  constructor(client: pg.Client) {
    this.#client = client;
    const end = () => {
      this.ended = true;
    };
    // A server gone away fails the statements on the wire (each caller hears of it); the
    // connection is then replaced, never used again.
    client.on('error', end).on('end', end);
    client.connect().catch(end);
  }

  get inFlight(): number {
    return this.#sent.length;
  }

  stalled(now: number): boolean {
    const oldest = this.#sent[0];
    return oldest !== undefined && now - oldest > STALLED_MS;
  }

  async run<R>(
    query: CompiledQuery,
    timing: Pick<SharedConnections, 'took'>,
  ): Promise<QueryResult<R>> {
    this.#sent.push(performance.now());
    try {
      const { command, rowCount, rows } = await this.#client.query(query.sql, [
        ...query.parameters,
      ]);
      return {
        numAffectedRows:
          command === 'INSERT' ||
          command === 'UPDATE' ||
          command === 'DELETE' ||
          command === 'MERGE'
            ? BigInt(rowCount ?? 0)
            : undefined,
        rows: (rows ?? []) as R[],
      };
    } finally {
      // The server starts on a statement once it has sent the answer before it: what this one
      // took on its own, without the wait behind the statements ahead of it.
      const answered = performance.now();
      const sent = this.#sent.shift() ?? answered;
      timing.took(query.sql, answered - Math.max(sent, this.#lastAnswer));
      this.#lastAnswer = answered;
    }
  }

  async close(): Promise<void> {
    this.ended = true;
    await this.#client.end().catch(() => {});
  }
}
