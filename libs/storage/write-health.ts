import { type Kysely, sql } from 'kysely';
import type { AppError } from '../http/errors.ts';
import type { Transactor } from '../http/unit-of-work.ts';
import type { Database } from './database.ts';
import { postgresStorageFault } from './postgres-errors.ts';
import { isStorageFault, type StorageFault } from './storage-faults.ts';

/** How often a faulted instance may try its write probe: each one costs a catalog write. */
export const WRITE_PROBE_INTERVAL_MS = 1_000;

/**
 * Whether Postgres takes writes, as the last write (or probe) found it. A storage fault seen on
 * any request makes the instance not ready, so a load balancer sends its writes elsewhere; it
 * is ready again once a unit of work commits, or once the probe, run at most once a
 * WRITE_PROBE_INTERVAL_MS by readiness checks, writes: an instance taken out of rotation gets
 * no writes of its own to prove it.
 */
export class WriteHealth {
  private fault: StorageFault | undefined;
  private probing: Promise<void> | undefined;
  private lastProbe = 0;
  private readonly probe: () => Promise<void>;
  private readonly now: () => number;

  constructor(probe: () => Promise<void>, now: () => number = Date.now) {
    this.probe = probe;
    this.now = now;
  }

  /** Remembers a storage fault from a Postgres error or from the problem it became. */
  observe(error: unknown): void {
    const fault =
      postgresStorageFault(error) ?? (isStorageFaultError(error) ? error.code : undefined);
    if (fault) this.fault = fault;
  }

  succeeded(): void {
    this.fault = undefined;
  }

  /** A translator for the error middleware that notes what `classify` finds. */
  watching(
    classify: (error: unknown) => AppError | undefined,
  ): (error: unknown) => AppError | undefined {
    return (error) => {
      const known = classify(error);
      if (known) this.observe(known);
      return known;
    };
  }

  /** Units of work that report their outcome: a commit clears a fault, a storage fault sets it. */
  watch<Tx>(transact: Transactor<Tx>): Transactor<Tx> {
    return async (work) => {
      try {
        const result = await transact(work);
        this.succeeded();
        return result;
      } catch (error) {
        this.observe(error);
        throw error;
      }
    };
  }

  /** `ok`, or the fault writes are failing with after a fresh probe (if one is due). */
  async check(): Promise<'ok' | StorageFault> {
    if (!this.fault) return 'ok';
    if (!this.probing && this.now() - this.lastProbe >= WRITE_PROBE_INTERVAL_MS) {
      this.lastProbe = this.now();
      this.probing = this.probe()
        .then(
          () => this.succeeded(),
          (error: unknown) => this.observe(error),
        )
        .finally(() => {
          this.probing = undefined;
        });
    }
    await this.probing;
    return this.fault ?? 'ok';
  }
}

function isStorageFaultError(error: unknown): error is AppError & { code: StorageFault } {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && isStorageFault(code);
}

/**
 * A write Postgres must really do: a temporary table gets a file and a page, which needs free
 * space in the database's tablespace, a file system that takes writes and a transaction that
 * may write (not a standby, not read-only). It is rolled back, so it leaves nothing behind.
 */
export function postgresWriteProbe(db: Kysely<Database>): () => Promise<void> {
  return () =>
    db.connection().execute(async (conn) => {
      await sql`begin`.execute(conn);
      try {
        await sql`create temporary table cairn_write_probe (filler text) on commit drop`.execute(
          conn,
        );
        await sql`insert into cairn_write_probe values (repeat('x', 64))`.execute(conn);
      } finally {
        await sql`rollback`.execute(conn);
      }
    });
}
