import type { ClickHouseClient } from '@clickhouse/client';
import type { Kysely } from 'kysely';
import type { Database } from '../storage/database.ts';
import { type FactRow, toFactRow } from './fact-rows.ts';
import type { InsertPacing } from './insert-pacing.ts';
import {
  commitPending,
  loadCheckpoint,
  nextBatchEnd,
  type Position,
  readBatch,
  savePending,
} from './outbox-reader.ts';

export interface ProjectorDeps {
  db: Kysely<Database>;
  clickhouse: ClickHouseClient;
  batchSize: number;
  now?: () => Date;
  /** Checkpoint name and target table; a rebuild projects into another pair. */
  checkpoint?: string;
  table?: string;
  /** Fault injection for tests: runs after the ClickHouse insert, before the checkpoint moves. */
  afterInsert?: () => void | Promise<void>;
  /** Told about each projected batch (metrics). */
  onBatch?: (batch: { facts: number; seconds: number }) => void;
  /** Once aborted, `drainOutbox` returns after the batch in hand (graceful shutdown). */
  signal?: AbortSignal;
  /** Spaces small inserts under a steady stream of writes (the live projector's). */
  pacing?: InsertPacing;
}

export const FACTS_CHECKPOINT = 'facts';

/**
 * A rebuild's swap may only run between two live batches. Under a steady stream of writes the
 * live projector starts its next batch the moment one ends, so the swap asks it to hold: while
 * this row is fresh, no new live batch starts (one in flight still finishes). A hold left by a
 * crashed rebuild expires on its own.
 */
export const SWAP_HOLD = 'facts_swap_hold';
const SWAP_HOLD_EXPIRES_MS = 30_000;

/** Asks the live projector not to start another batch (renew it on every attempt). */
export async function holdLiveProjector(db: Kysely<Database>, now: Date): Promise<void> {
  await db
    .insertInto('projector_checkpoints')
    .values({ name: SWAP_HOLD, updated_at: now })
    .onConflict((conflict) => conflict.column('name').doUpdateSet({ updated_at: now }))
    .execute();
}

export async function releaseLiveProjector(db: Kysely<Database>): Promise<void> {
  await db.deleteFrom('projector_checkpoints').where('name', '=', SWAP_HOLD).execute();
}

async function swapHeld(db: Kysely<Database>): Promise<boolean> {
  const hold = await db
    .selectFrom('projector_checkpoints')
    .select('updated_at')
    .where('name', '=', SWAP_HOLD)
    .executeTakeFirst();
  return hold !== undefined && Date.now() - hold.updated_at.getTime() < SWAP_HOLD_EXPIRES_MS;
}

/**
 * Projects one batch of outbox facts into ClickHouse and returns how many it projected (0 when
 * nothing is ready). Crash-safe at every step: the batch's bounds are saved before the insert,
 * a retry re-sends exactly those rows under the same deduplication token (ClickHouse drops the
 * repeat), and only then does the cursor move.
 */
export async function projectBatch(deps: ProjectorDeps): Promise<number> {
  const name = deps.checkpoint ?? FACTS_CHECKPOINT;
  const started = performance.now();
  const batch = await deps.db.transaction().execute(async (trx) => {
    const checkpoint = await loadCheckpoint(trx, name, true);
    if (checkpoint.pending) return { from: checkpoint.cursor, to: checkpoint.pending };
    if (name === FACTS_CHECKPOINT && (await swapHeld(trx))) return null;
    const end = await nextBatchEnd(trx, checkpoint.cursor, deps.batchSize);
    if (!end) return null;
    await savePending(trx, name, end);
    return { from: checkpoint.cursor, to: end };
  });
  if (!batch) return 0;

  const rows = (await readBatch(deps.db, batch.from, batch.to)).map(toFactRow);
  await insertFacts(
    deps.clickhouse,
    deps.table ?? 'facts',
    rows,
    dedupToken(name, batch.from, batch.to),
  );
  await deps.afterInsert?.();
  await commitPending(deps.db, name, batch.to, (deps.now ?? (() => new Date()))());
  deps.onBatch?.({ facts: rows.length, seconds: (performance.now() - started) / 1000 });
  return rows.length;
}

/** Projects until nothing is ready (or `signal` aborts); returns the number of facts projected. */
export async function drainOutbox(deps: ProjectorDeps): Promise<number> {
  let total = 0;
  while (!deps.signal?.aborted) {
    await deps.pacing?.ready(deps.signal);
    if (deps.signal?.aborted) break;
    const started = performance.now();
    const projected = await projectBatch(deps);
    if (projected === 0) return total;
    deps.pacing?.projected(started, projected >= deps.batchSize);
    total += projected;
  }
  return total;
}

/**
 * Inserts a batch under its deduplication token: sent again with the same token, ClickHouse
 * drops it, from facts and from the rollups its views feed alike.
 */
export async function insertFacts(
  clickhouse: ClickHouseClient,
  table: string,
  rows: FactRow[],
  token: string,
): Promise<void> {
  await clickhouse.insert({
    table,
    values: rows,
    format: 'JSONEachRow',
    clickhouse_settings: {
      insert_deduplication_token: token,
      // Every insert plans each rollup view's SELECT afresh, whatever the batch's size; with
      // the older planner an insert takes about 30 % less user CPU (`npm run bench --
      // insert-cost`), and tests hold the rollups to what the views compute with the analyzer.
      allow_experimental_analyzer: 0,
    },
  });
}

/** Derived from the batch's exact bounds: a different batch can never reuse a token. */
export function dedupToken(name: string, from: Position, to: Position): string {
  return `${name}:${from.xid}.${from.id}-${to.xid}.${to.id}`;
}
