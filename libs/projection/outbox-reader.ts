import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type { Database, Db } from '../storage/database.ts';
import type { ProjectorCheckpointsTable } from './checkpoint.tables.ts';
import { type FactSpan, logSpans } from './projection-changes.ts';

export interface OutboxRow {
  id: number;
  xid: string;
  kind: string;
  business: string;
  task_gid: string;
  payload: Record<string, unknown>;
  occurred_at: Date;
  /** The writing request's W3C traceparent, when it was traced. */
  trace_context: string | null;
}

export interface Position {
  xid: string;
  id: number;
}

export interface Checkpoint {
  cursor: Position;
  pending: (Position & { count: number }) | null;
  projectedAt: Date | null;
}

export async function loadCheckpoint(db: Db, name: string, lock = false): Promise<Checkpoint> {
  await ensureCheckpoint(db, name);
  let query = db.selectFrom('projector_checkpoints').selectAll().where('name', '=', name);
  if (lock) query = query.forUpdate();
  return toCheckpoint(await query.executeTakeFirstOrThrow());
}

/**
 * The checkpoint, locked, or null at once when another transaction holds it (a batch starting
 * or finishing): for a caller that would rather try again than wait behind a slow batch.
 */
export async function tryLockCheckpoint(db: Db, name: string): Promise<Checkpoint | null> {
  await ensureCheckpoint(db, name);
  const row = await db
    .selectFrom('projector_checkpoints')
    .selectAll()
    .where('name', '=', name)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
  return row ? toCheckpoint(row) : null;
}

async function ensureCheckpoint(db: Db, name: string): Promise<void> {
  await db
    .insertInto('projector_checkpoints')
    .values({ name })
    .onConflict((conflict) => conflict.column('name').doNothing())
    .execute();
}

function toCheckpoint(row: Selectable<ProjectorCheckpointsTable>): Checkpoint {
  return {
    cursor: { xid: row.cursor_xid, id: row.cursor_id },
    pending:
      row.pending_xid !== null && row.pending_id !== null
        ? { xid: row.pending_xid, id: row.pending_id, count: row.pending_count ?? 0 }
        : null,
    projectedAt: row.projected_at,
  };
}

/**
 * What a fact weighs in a batch: one, plus one per blocked change it carries. The rollup views
 * expand every change into a row of its own, so a batch's work grows with this, not its length.
 */
const FACT_WEIGHT = sql`(1 + case jsonb_typeof(payload -> 'blocked_changes')
  when 'array' then jsonb_array_length(payload -> 'blocked_changes') else 0 end)`;

/**
 * How much one batch may weigh (see FACT_WEIGHT): about a second of insert work on this
 * machine class, so a hub's fan-out is projected in slices with other businesses' facts never
 * more than a slice behind it. A batch always holds at least one fact.
 */
export const BATCH_WEIGHT = 20_000;

/**
 * The end of the next batch after `cursor`, counting only facts whose transaction is older than
 * every transaction still running. Such a set never gains members below its top, so keyset
 * pagination over (xid, id) cannot skip a fact that commits late with a low id. The batch stops
 * at `limit` facts or once it weighs `weight` (`cut`: it stopped early, more may be ready).
 */
export async function nextBatchEnd(
  db: Db,
  cursor: Position,
  limit: number,
  weight = BATCH_WEIGHT,
): Promise<(Position & { count: number; cut: boolean }) | null> {
  const result = await sql<{ xid: string; id: number; count: number; cut: boolean }>`
    select xid::text as xid, id, count(*) filter (where keep) over () as count,
      bool_or(not keep) over () as cut
    from (
      select xid, id, sum(weight) over (order by xid, id rows unbounded preceding) - weight < ${weight} as keep
      from (
        select xid, id, ${FACT_WEIGHT} as weight from outbox
        where (xid, id) > (${cursor.xid}::xid8, ${cursor.id}::bigint)
          and xid < pg_snapshot_xmin(pg_current_snapshot())
        order by xid, id
        limit ${limit}
      ) candidates
    ) batch
    order by keep desc, xid desc, id desc
    limit 1`.execute(db);
  const row = result.rows[0];
  return row
    ? { xid: row.xid, id: Number(row.id), count: Number(row.count), cut: Boolean(row.cut) }
    : null;
}

/**
 * The facts in (from, to], in position order: exactly the rows a pending batch was fixed to,
 * less those of a business being erased (libs/erasure): read after its mark, they must never
 * reach ClickHouse, whose copies the erasure deletes.
 */
export async function readBatch(db: Db, from: Position, to: Position): Promise<OutboxRow[]> {
  const result = await sql<OutboxRow>`
    select id, xid::text as xid, kind, business, task_gid, payload, occurred_at, trace_context
    from outbox o
    where (xid, id) > (${from.xid}::xid8, ${from.id}::bigint)
      and (xid, id) <= (${to.xid}::xid8, ${to.id}::bigint)
      and not exists (select 1 from business_erasures e
        where e.business = o.business and e.status = 'running')
    order by xid, id`.execute(db);
  return result.rows;
}

export async function savePending(
  db: Db,
  name: string,
  pending: Position & { count: number },
): Promise<void> {
  await db
    .updateTable('projector_checkpoints')
    .set({
      pending_xid: pending.xid,
      pending_id: pending.id,
      pending_count: pending.count,
      updated_at: new Date(),
    })
    .where('name', '=', name)
    .execute();
}

/**
 * Moves the cursor past a pending batch; a no-op if another worker already did. With `spans`,
 * the same statement logs what the batch changed (projection-changes.ts), only if it moved.
 */
export async function commitPending(
  db: Kysely<Database>,
  name: string,
  pending: Position,
  now: Date,
  spans?: FactSpan[],
  fence?: (trx: Transaction<Database>) => Promise<void>,
): Promise<void> {
  const move = async (on: Kysely<Database>) => {
    const moved = on
      .updateTable('projector_checkpoints')
      .set({
        cursor_xid: pending.xid,
        cursor_id: pending.id,
        pending_xid: null,
        pending_id: null,
        pending_count: null,
        projected_at: now,
        updated_at: now,
      })
      .where('name', '=', name)
      .where(sql<boolean>`pending_xid = ${pending.xid}::xid8`)
      .where('pending_id', '=', pending.id);
    if (!spans) {
      await moved.execute();
      return;
    }
    await sql`with moved as (${moved.returning(['cursor_xid', 'cursor_id'])}), ${logSpans(spans)}`.execute(
      on,
    );
  };
  if (!fence) return move(db);
  // Under the lease: it cannot change hands between the check and the commit.
  await db.transaction().execute(async (trx) => {
    await fence(trx);
    await move(trx);
  });
}

/** How many facts wait past the cursor, committed or not yet visible to the projector. */
export async function countUnprojected(db: Db, cursor: Position): Promise<number> {
  const result = await sql<{ n: string }>`
    select count(*) as n from outbox
    where (xid, id) > (${cursor.xid}::xid8, ${cursor.id}::bigint)`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}
