import { type Kysely, sql } from 'kysely';
import type { Database, Db } from '../storage/database.ts';
import type { Position } from './outbox-reader.ts';
import { FACTS_CHECKPOINT, REBUILD_CHECKPOINT } from './projector.ts';

/**
 * A rebuild checkpoint untouched this long is a crashed rebuild's: it stops holding pruning back
 * (the next rebuild starts afresh anyway). Longer than a rebuild's copy of the pruned facts.
 */
const REBUILD_STALE_MS = 6 * 3_600_000;
/** Marks kept over one retention period: enough to bound it to about a thousandth of it. */
const MARKS_PER_PERIOD = 1_000;
const DAY_MS = 86_400_000;

/** What pruning has removed so far: every fact up to `horizon` (projection order), ids ≤ `maxRemovedId`. */
export interface RetentionState {
  horizon: Position;
  maxRemovedId: number;
  removed: number;
}

export interface PruneOptions {
  db: Kysely<Database>;
  /** `CAIRN_OUTBOX_RETENTION_DAYS`: 0 removes facts as soon as they are projected. */
  days: number;
  /** Facts removed per transaction: short, so writers and the projector never wait long. */
  batchSize: number;
  now?: () => Date;
}

export async function readRetention(db: Db, lock = false): Promise<RetentionState> {
  const locking = lock ? sql` for update` : sql``;
  const result = await sql<{
    horizon_xid: string;
    horizon_id: string;
    max_removed_id: string;
    removed: string;
  }>`select horizon_xid::text as horizon_xid, horizon_id, max_removed_id, removed
    from outbox_retention${locking}`.execute(db);
  const row = result.rows[0];
  if (!row) throw new Error('outbox_retention has no row: the Postgres migrations did not run');
  return {
    horizon: { xid: row.horizon_xid, id: Number(row.horizon_id) },
    maxRemovedId: Number(row.max_removed_id),
    removed: Number(row.removed),
  };
}

/**
 * Records where the live projector's cursor stands now, at most once per `period / 1000`, and
 * forgets marks older than the one the period bounds pruning by (so about a thousand are kept).
 */
async function markCursor(db: Db, days: number, now: Date): Promise<void> {
  const spacingMs = (days * DAY_MS) / MARKS_PER_PERIOD;
  await sql`insert into outbox_retention_marks (marked_at, cursor_xid, cursor_id)
    select ${now}::timestamptz, cursor_xid, cursor_id from projector_checkpoints
    where name = ${FACTS_CHECKPOINT}
      and not exists (select 1 from outbox_retention_marks
        where marked_at > ${new Date(now.getTime() - spacingMs)}::timestamptz)
    on conflict (marked_at) do nothing`.execute(db);
  await sql`delete from outbox_retention_marks where marked_at < (
      select max(marked_at) from outbox_retention_marks
      where marked_at <= ${new Date(now.getTime() - days * DAY_MS)}::timestamptz)`.execute(db);
}

/**
 * The last fact that may go: one the live projector had passed `days` ago (by its marks; at
 * once for 0), and one any rebuild in progress has read too. Null when nothing may go yet.
 */
async function pruneBound(db: Db, days: number, now: Date): Promise<Position | null> {
  const live =
    days === 0
      ? await sql<{ xid: string; id: string }>`
          select cursor_xid::text as xid, cursor_id as id from projector_checkpoints
          where name = ${FACTS_CHECKPOINT}`.execute(db)
      : await sql<{ xid: string; id: string }>`
          select cursor_xid::text as xid, cursor_id as id from outbox_retention_marks
          where marked_at <= ${new Date(now.getTime() - days * DAY_MS)}::timestamptz
          order by marked_at desc limit 1`.execute(db);
  const [bound] = live.rows;
  if (!bound) return null;
  // While a rebuild reads the outbox, nothing it has yet to read goes.
  const rebuild = await sql<{ xid: string; id: string }>`
    select cursor_xid::text as xid, cursor_id as id from projector_checkpoints
    where name = ${REBUILD_CHECKPOINT}
      and updated_at > ${new Date(now.getTime() - REBUILD_STALE_MS)}::timestamptz`.execute(db);
  const positions = [bound, ...rebuild.rows].map((p) => ({ xid: p.xid, id: Number(p.id) }));
  return positions.reduce((a, b) => (comparePositions(a, b) <= 0 ? a : b));
}

/**
 * Removes the next batch of facts the retention period lets go, oldest first in projection
 * order, and returns how many it removed (fewer than the batch size: nothing more may go now).
 *
 * Only facts at or before a cursor the live projector has committed go, so every one of them is
 * committed and in ClickHouse: a fact that commits late with a lower id sits after the cursor
 * (the projector passes only transactions older than every running one) and stays. The batch,
 * the horizon and the largest removed id move together in one transaction holding the
 * retention row, which a rebuild's start also takes.
 */
export async function pruneOutbox(options: PruneOptions): Promise<number> {
  const now = (options.now ?? (() => new Date()))();
  if (options.days > 0) await markCursor(options.db, options.days, now);
  return options.db.transaction().execute(async (trx) => {
    const state = await readRetention(trx, true);
    const bound = await pruneBound(trx, options.days, now);
    if (!bound || comparePositions(bound, state.horizon) <= 0) return 0;
    const removed = await sql<{ xid: string; id: string }>`
      delete from outbox where id in (
        select id from outbox
        where (xid, id) > (${state.horizon.xid}::xid8, ${state.horizon.id}::bigint)
          and (xid, id) <= (${bound.xid}::xid8, ${bound.id}::bigint)
        order by xid, id
        limit ${options.batchSize})
      returning xid::text as xid, id`.execute(trx);
    if (removed.rows.length === 0) return 0;
    const positions = removed.rows.map((r) => ({ xid: r.xid, id: Number(r.id) }));
    const last = positions.reduce((a, b) => (comparePositions(a, b) >= 0 ? a : b));
    const maxId = Math.max(state.maxRemovedId, ...positions.map((p) => p.id));
    await sql`update outbox_retention set horizon_xid = ${last.xid}::xid8,
        horizon_id = ${last.id}, max_removed_id = ${maxId},
        removed = removed + ${positions.length}, updated_at = ${now}`.execute(trx);
    return positions.length;
  });
}

export interface RetentionLoopOptions extends PruneOptions {
  /** Pause between rounds once nothing more may go. */
  intervalMs: number;
  /** Told about a failed round (the loop carries on at the next). */
  onError?: (error: unknown) => void;
}

export interface RunningRetention {
  /** Resolves once the batch in hand has finished and the loop has stopped. */
  stop(): Promise<void>;
}

/**
 * Prunes in the background: batch after batch while facts may go, each followed by a pause
 * four times as long as the batch took (pruning holds at most a fifth of one connection's time,
 * and still removes facts faster than writes add them: thousands a second), then a round every `intervalMs`.
 */
export function startOutboxRetention(options: RetentionLoopOptions): RunningRetention {
  const abort = new AbortController();
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      if (abort.signal.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        abort.signal.removeEventListener('abort', done);
        resolve();
      }
      abort.signal.addEventListener('abort', done);
    });
  const running = (async () => {
    while (!abort.signal.aborted) {
      try {
        for (;;) {
          const started = performance.now();
          const removed = await pruneOutbox(options);
          if (removed < options.batchSize || abort.signal.aborted) break;
          await pause(4 * (performance.now() - started));
        }
      } catch (error) {
        if (!abort.signal.aborted) options.onError?.(error);
      }
      await pause(options.intervalMs);
    }
  })();
  return {
    async stop() {
      abort.abort();
      await running;
    },
  };
}

export function comparePositions(a: Position, b: Position): number {
  const xa = BigInt(a.xid);
  const xb = BigInt(b.xid);
  if (xa !== xb) return xa < xb ? -1 : 1;
  return Math.sign(Number(a.id) - Number(b.id));
}
