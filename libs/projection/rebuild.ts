import type { ClickHouseClient } from '@clickhouse/client';
import type { Kysely } from 'kysely';
import { ROLLUP_NAMES } from '../analytics/sources/rollups.ts';
import type { Database } from '../storage/database.ts';
import { toFactRow } from './fact-rows.ts';
import { countUnprojected, loadCheckpoint, type Position, readBatch } from './outbox-reader.ts';
import { comparePositions, readRetention } from './outbox-retention.ts';
import { logEverythingChanged } from './projection-changes.ts';
import {
  dedupToken,
  FACTS_CHECKPOINT,
  holdLiveProjector,
  insertFacts,
  projectNext,
  REBUILD_CHECKPOINT,
  releaseLiveProjector,
} from './projector.ts';
import { fillRollups, resetRollups } from './rollup-backfill.ts';
import { RollupBuilds } from './rollup-builds.ts';

/** The table a rebuild fills, and its checkpoint; after the swap it holds the old facts, then goes. */
export const REBUILD_TABLE = 'facts_rebuild';
export { REBUILD_CHECKPOINT };

/** Where the pruned facts are copied out of `facts` before the ones still in the outbox are left out. */
const RETAINED_TABLE = 'facts_retained';

const SWAP_ATTEMPTS = 200;
/** Facts the live projector may be ahead by for the swap to copy them while holding it still. */
const SWAP_MAX_GAP = 10_000;

export interface RebuildOptions {
  db: Kysely<Database>;
  clickhouse: ClickHouseClient;
  batchSize: number;
  now?: () => Date;
  /** Called after each batch; `total` is the outbox size at the start (it grows with new writes). */
  onProgress?: (progress: { projected: number; total: number }) => void;
  /** Called as the rollups are refilled from the new facts, after the swap. */
  onRollupProgress?: (progress: { done: number; total: number }) => void;
  /** Rollup completeness as this process sees it; read from ClickHouse when not given. */
  builds?: RollupBuilds;
}

/**
 * Re-projects every fact into a fresh table and swaps it in for `facts` atomically
 * (EXCHANGE TABLES), while the live projector and queries carry on against the old table.
 *
 * The swap is the delicate part. It happens inside a Postgres transaction that holds the live
 * checkpoint row, which every live batch must lock to start and to commit, and only when no
 * live batch is pending (so no live insert is in flight) and the rebuild has reached at least
 * the live cursor. The live cursor then moves to the rebuild's, so the live projector carries
 * on exactly where the rebuilt table ends.
 *
 * Under a steady stream of writes the outbox is never empty, so the rebuild does not wait for
 * that: it stops draining at its first short batch, and the swap itself copies the few facts
 * the live projector got to meanwhile, while it holds the live projector still.
 *
 * Facts the outbox retention has removed exist only in `facts` now, the durable history: they
 * are copied from there (see `copyPrunedFacts`), and the rebuild projects the outbox from the
 * retention horizon on.
 */
export async function rebuildFacts(options: RebuildOptions): Promise<{ facts: number }> {
  const { db, clickhouse } = options;
  const now = options.now ?? (() => new Date());
  await clickhouse.command({ query: `DROP TABLE IF EXISTS ${REBUILD_TABLE}` });
  // AS copies the engine, sort key and settings (the deduplication window among them).
  await clickhouse.command({ query: `CREATE TABLE ${REBUILD_TABLE} AS facts` });
  await db.deleteFrom('projector_checkpoints').where('name', '=', REBUILD_CHECKPOINT).execute();

  const pruned = await startAtRetentionHorizon(db, now());
  let projected = await copyPrunedFacts(db, clickhouse, pruned);
  let total = projected + (await countUnprojected(db, pruned.horizon));
  options.onProgress?.({ projected, total });
  const deps = {
    db,
    clickhouse,
    batchSize: options.batchSize,
    now,
    checkpoint: REBUILD_CHECKPOINT,
    table: REBUILD_TABLE,
    onBatch: ({ facts }: { facts: number }) => {
      projected += facts;
      total = Math.max(total, projected);
      options.onProgress?.({ projected, total });
    },
  };

  while ((await projectNext(deps)).full) {}
  // The rollups describe the old facts until refilled from the new: queries read facts meanwhile.
  const builds = options.builds ?? (await new RollupBuilds(clickhouse).start());
  await builds.mark(ROLLUP_NAMES, false);
  await new Promise((resolve) => setTimeout(resolve, 2 * builds.refreshMs));
  let cutoff: string | null = null;
  try {
    for (let attempt = 1; cutoff === null; attempt++) {
      await holdLiveProjector(db, new Date());
      while ((await projectNext(deps)).full) {}
      cutoff = await swapIfCaughtUp(db, clickhouse, now(), SWAP_MAX_GAP);
      if (cutoff !== null) break;
      if (attempt >= SWAP_ATTEMPTS) {
        throw new Error('the rebuild could not catch up with the live projector; try again');
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await releaseLiveProjector(db);
  }
  await clickhouse.command({ query: `DROP TABLE IF EXISTS ${REBUILD_TABLE}` });
  await db.deleteFrom('projector_checkpoints').where('name', '=', REBUILD_CHECKPOINT).execute();
  await fillRollups({ clickhouse, onProgress: options.onRollupProgress }, ROLLUP_NAMES, cutoff);
  await builds.mark(ROLLUP_NAMES, true);
  if (!options.builds) await builds.close();
  return { facts: projected };
}

/** Swaps the tables when caught up and returns the rollups' cutoff; null to try again. */
async function swapIfCaughtUp(
  db: Kysely<Database>,
  clickhouse: ClickHouseClient,
  now: Date,
  maxGap: number,
): Promise<string | null> {
  return db.transaction().execute(async (trx) => {
    const live = await loadCheckpoint(trx, FACTS_CHECKPOINT, true);
    if (live.pending) return null;
    const rebuilt = await loadCheckpoint(trx, REBUILD_CHECKPOINT);
    if (rebuilt.pending) return null;
    const behind = comparePositions(rebuilt.cursor, live.cursor) < 0;
    if (behind) {
      // Facts the live projector has already carried: committed, so readable here.
      const gap = await readBatch(trx, rebuilt.cursor, live.cursor);
      if (gap.length > maxGap) return null;
      await insertFacts(
        clickhouse,
        REBUILD_TABLE,
        gap.map(toFactRow),
        dedupToken(REBUILD_CHECKPOINT, rebuilt.cursor, live.cursor),
      );
    }
    const cursor = behind ? live.cursor : rebuilt.cursor;
    await trx
      .updateTable('projector_checkpoints')
      .set({
        cursor_xid: cursor.xid,
        cursor_id: cursor.id,
        projected_at: now,
        updated_at: now,
      })
      .where('name', '=', FACTS_CHECKPOINT)
      .execute();
    // Every fact may read otherwise in the new table: no kept answer holds in part either.
    await logEverythingChanged(trx, FACTS_CHECKPOINT);
    // Last step inside the transaction: if the exchange fails, the cursor update rolls back.
    // (A crash between the exchange and the commit would leave the live cursor behind the new
    // table; the window is one round trip.)
    await clickhouse.command({ query: `EXCHANGE TABLES facts AND ${REBUILD_TABLE}` });
    // Still holding the live projector: the rollups restart empty, fed by their views from here
    // on, and are refilled with every fact projected up to the cutoff.
    return resetRollups(clickhouse, ROLLUP_NAMES);
  });
}

/**
 * Creates the rebuild's checkpoint at the retention horizon, holding the retention row so no
 * pruning batch moves the horizon meanwhile. From then on pruning waits for this checkpoint too
 * (outbox-retention.ts): nothing the rebuild has yet to read leaves the outbox.
 */
async function startAtRetentionHorizon(
  db: Kysely<Database>,
  now: Date,
): Promise<{ horizon: Position; maxRemovedId: number }> {
  return db.transaction().execute(async (trx) => {
    const state = await readRetention(trx, true);
    await trx
      .insertInto('projector_checkpoints')
      .values({
        name: REBUILD_CHECKPOINT,
        cursor_xid: state.horizon.xid,
        cursor_id: state.horizon.id,
        updated_at: now,
      })
      .execute();
    return state;
  });
}

/**
 * Copies the facts the outbox no longer holds from `facts` into the rebuild's table and returns
 * how many. They all have ids up to `maxRemovedId`, but so may a few facts still in the outbox
 * (a transaction that took its ids early and committed after the horizon); those are left out,
 * as the rebuild projects them from the outbox. The candidates are copied aside first and the
 * outbox read after: a fact in the copy was committed before it, so the read sees it.
 */
async function copyPrunedFacts(
  db: Kysely<Database>,
  clickhouse: ClickHouseClient,
  pruned: { horizon: Position; maxRemovedId: number },
): Promise<number> {
  if (pruned.maxRemovedId === 0) return 0;
  const settings = { insert_deduplicate: 0 } as const;
  await clickhouse.command({ query: `DROP TABLE IF EXISTS ${RETAINED_TABLE}` });
  await clickhouse.command({ query: `CREATE TABLE ${RETAINED_TABLE} AS facts` });
  try {
    await clickhouse.command({
      query: `INSERT INTO ${RETAINED_TABLE} SELECT * FROM facts WHERE fact_id <= {max:UInt64}`,
      query_params: { max: pruned.maxRemovedId },
      clickhouse_settings: settings,
    });
    const kept = await db
      .selectFrom('outbox')
      .select('id')
      .where('id', '<=', pruned.maxRemovedId)
      .execute();
    await clickhouse.command({
      query: `INSERT INTO ${REBUILD_TABLE} SELECT * FROM ${RETAINED_TABLE}
        WHERE fact_id NOT IN {kept:Array(UInt64)}`,
      query_params: { kept: kept.map((row) => Number(row.id)) },
      clickhouse_settings: settings,
    });
    const counted = await clickhouse.query({
      query: `SELECT count() AS n FROM ${REBUILD_TABLE}`,
      format: 'JSONEachRow',
    });
    const [row] = await counted.json<{ n: string }>();
    return Number(row?.n ?? 0);
  } finally {
    await clickhouse.command({ query: `DROP TABLE IF EXISTS ${RETAINED_TABLE}` });
  }
}
