import type { ClickHouseClient } from '@clickhouse/client';
import type { Span } from '@opentelemetry/api';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../storage/database.ts';
import { inSpan, linksTo, SpanKind } from '../tracing/tracing.ts';
import { bareFactRow, type FactRow, toFactRow } from './fact-rows.ts';
import type { InsertPacing } from './insert-pacing.ts';
import {
  commitPending,
  loadCheckpoint,
  nextBatchEnd,
  type OutboxRow,
  type Position,
  readBatch,
  savePending,
} from './outbox-reader.ts';
import { factSpans } from './projection-changes.ts';
import { type Leadership, LeaseLostError } from './projector-lease.ts';

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
  /** Told when a batch is cut short, fails or is split. */
  logger?: ProjectorLog;
  /**
   * The projector lease (projector-lease.ts): batches are claimed, inserted and committed only
   * under it. Without it (a rebuild, the CLI) this process projects regardless.
   */
  leadership?: Leadership;
}

/** The levels the projector logs at (a pino logger is one). */
export interface ProjectorLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export const FACTS_CHECKPOINT = 'facts';
/** The checkpoint a rebuild projects under (rebuild.ts); outbox retention waits for it too. */
export const REBUILD_CHECKPOINT = 'facts_rebuild';

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
  return (await projectNext(deps)).facts;
}

/**
 * `projectBatch`, also saying whether the batch was full (it stopped at the batch size or at
 * its weight, or was split): more facts may be ready at once.
 *
 * A batch whose insert fails twice is split: its pending bounds shrink to its first half (a
 * batch of other bounds, with its own deduplication token) and that half is tried at once,
 * down to a single fact; the rest follows as the next batches. A batch the engine cannot take
 * whole (too much work, a memory limit) so never holds every other business's facts behind it
 * on each retry. A single fact that still fails is retried as it is: skipping it would lose it.
 */
export async function projectNext(deps: ProjectorDeps): Promise<{ facts: number; full: boolean }> {
  const name = deps.checkpoint ?? FACTS_CHECKPOINT;
  const started = performance.now();
  const lease = fenceOf(deps.leadership);
  const batch = await deps.db.transaction().execute(async (trx) => {
    await lease.fence(trx);
    const checkpoint = await loadCheckpoint(trx, name, true);
    if (checkpoint.pending) return { from: checkpoint.cursor, to: checkpoint.pending, full: true };
    if (name === FACTS_CHECKPOINT && (await swapHeld(trx))) return null;
    const end = await nextBatchEnd(trx, checkpoint.cursor, deps.batchSize);
    if (!end) return null;
    await savePending(trx, name, end);
    if (end.cut) {
      deps.logger?.info(
        { batch: dedupToken(name, checkpoint.cursor, end), facts: end.count },
        'projector: batch cut short at its weight (facts carrying many blocked changes)',
      );
    }
    return { from: checkpoint.cursor, to: end, full: end.cut || end.count >= deps.batchSize };
  });
  if (!batch) return { facts: 0, full: false };
  // A batch belongs to no request: its own trace, linked to the writes whose facts it carries.
  return inSpan(
    'projector batch',
    { kind: SpanKind.CONSUMER, root: true, attributes: { 'cairn.projector.checkpoint': name } },
    (span) => projectFixed(deps, name, batch, started, span, lease),
  );
}

/** The lease checks of one batch, all under the epoch it was claimed with (none without a lease). */
interface BatchFence {
  fence(trx: Transaction<Database>): Promise<void>;
  assertCurrent(): void;
}

function fenceOf(leadership: Leadership | undefined): BatchFence {
  if (!leadership) return { fence: async () => {}, assertCurrent: () => {} };
  const epoch = leadership.claim();
  return {
    fence: (trx) => leadership.fence(trx, epoch),
    assertCurrent: () => leadership.assertCurrent(epoch),
  };
}

async function projectFixed(
  deps: ProjectorDeps,
  name: string,
  batch: { from: Position; to: Position; full: boolean },
  started: number,
  span: Span | undefined,
  lease: BatchFence,
): Promise<{ facts: number; full: boolean }> {
  let to: Position = batch.to;
  let outbox = await readBatch(deps.db, batch.from, to);
  span?.addLinks(linksTo(outbox.map((row) => row.trace_context)));
  let rows = outbox.map(toFactRow);
  for (;;) {
    const token = dedupToken(name, batch.from, to);
    // A holder paused past its lease inserts nothing once it resumes.
    lease.assertCurrent();
    try {
      await insertFacts(deps.clickhouse, deps.table ?? 'facts', rows, token);
      failures.delete(token);
      break;
    } catch (error) {
      const failed = (failures.get(token) ?? 0) + 1;
      failures.set(token, failed);
      const half = Math.ceil(rows.length / 2);
      const last = outbox[half - 1];
      const [only] = rows;
      if (failed >= SPLIT_AFTER_FAILURES && only && rows.length === 1 && refusesData(error)) {
        // The engine answered that this fact's values cannot be stored (nothing the write side
        // produces, but a hand-edited or corrupt outbox row): it goes in reduced to the values
        // that always can, once, so the facts behind it are not held forever.
        deps.logger?.error(
          { err: error, batch: token, fact_id: only.fact_id, business: only.business },
          'projector: a fact the engine refuses is projected without its dates and blocked changes',
        );
        rows = [bareFactRow(only)];
        continue;
      }
      if (failed < SPLIT_AFTER_FAILURES || rows.length < 2 || !last) {
        deps.logger?.warn(
          { err: error, batch: token, facts: rows.length, failures: failed },
          rows.length < 2
            ? 'projector: a single fact failed to project; retrying it'
            : 'projector: batch failed to project; it is split if it fails again',
        );
        throw error;
      }
      const mid = await splitPending(deps.db, name, to, half, last);
      if (!mid) throw error;
      deps.logger?.warn(
        { err: error, batch: token, facts: rows.length, next: dedupToken(name, batch.from, mid) },
        `projector: batch failed ${failed} times; projecting its first ${half} facts alone`,
      );
      failures.delete(token);
      to = mid;
      outbox = outbox.slice(0, half);
      rows = rows.slice(0, half);
    }
  }
  await deps.afterInsert?.();
  // Only the live facts' changes are logged: a rebuild's table is not read until its swap.
  const spans = name === FACTS_CHECKPOINT ? factSpans(rows) : undefined;
  await commitPending(deps.db, name, to, (deps.now ?? (() => new Date()))(), spans, lease.fence);
  span?.setAttribute('cairn.projector.facts', rows.length);
  deps.onBatch?.({ facts: rows.length, seconds: (performance.now() - started) / 1000 });
  return { facts: rows.length, full: batch.full || to !== batch.to };
}

/**
 * Whether ClickHouse answered that the data cannot be stored (a parse or type error), as
 * opposed to being away, busy or out of memory, which retrying (or splitting) can get past.
 */
function refusesData(error: unknown): boolean {
  const type = (error as { type?: unknown }).type;
  return (
    typeof type === 'string' &&
    /^(CANNOT_PARSE|CANNOT_READ|TYPE_MISMATCH|INCORRECT_DATA|CANNOT_CONVERT)/.test(type)
  );
}

/** How often one batch's insert fails before it is split: a passing fault gets one retry whole. */
const SPLIT_AFTER_FAILURES = 2;
/** Failed attempts per batch token, in this process (a restart starts the count afresh). */
const failures = new Map<string, number>();

/**
 * Shrinks a pending batch ending at `to` to its first `count` facts, ending at `last`, unless
 * another worker has moved it meanwhile (then null: its batch is not this one any more).
 */
async function splitPending(
  db: Kysely<Database>,
  name: string,
  to: Position,
  count: number,
  last: OutboxRow,
): Promise<Position | null> {
  return db.transaction().execute(async (trx) => {
    const checkpoint = await loadCheckpoint(trx, name, true);
    const pending = checkpoint.pending;
    if (!pending || pending.xid !== to.xid || Number(pending.id) !== Number(to.id)) return null;
    const mid = { xid: last.xid, id: Number(last.id), count };
    await savePending(trx, name, mid);
    return mid;
  });
}

/** Projects until nothing is ready (or `signal` aborts); returns the number of facts projected. */
export async function drainOutbox(deps: ProjectorDeps): Promise<number> {
  let total = 0;
  while (!deps.signal?.aborted) {
    await deps.pacing?.ready(deps.signal);
    if (deps.signal?.aborted) break;
    const started = performance.now();
    let next: { facts: number; full: boolean };
    try {
      next = await projectNext(deps);
    } catch (error) {
      // Another process leads now: the batch in hand is its to finish.
      if (error instanceof LeaseLostError) return total;
      throw error;
    }
    const { facts, full } = next;
    if (facts === 0) return total;
    deps.pacing?.projected(started, full);
    total += facts;
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
