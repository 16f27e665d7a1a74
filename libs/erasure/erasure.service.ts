import type { ClickHouseClient } from '@clickhouse/client';
import type { Kysely } from 'kysely';
import { sealKey, unseal } from '../idempotency/idempotency-seal.ts';
import { forgetBusinessChanges } from '../projection/projection-changes.ts';
import { FACTS_CHECKPOINT, projectNext } from '../projection/projector.ts';
import { REBUILD_CHECKPOINT, REBUILD_TABLE } from '../projection/rebuild.ts';
import { advanceWatermark } from '../projection/watermark.ts';
import type { Database } from '../storage/database.ts';
import {
  businessInPostgres,
  deleteIdempotencyRecords,
  deleteMasterRecord,
  deleteOutboxSlice,
  deleteStrayEdges,
  deleteTaskSlice,
  deleteViews,
  type ErasureRow,
  findErasure,
  holdPassed,
  markErasure,
  olderWritesSettled,
  outboxIdRange,
  removeFromTokens,
  saveStep,
  sealedMasterRecords,
  vacuumErasedTables,
} from './erasure.repository.ts';
import { countBusinessRows, deleteBusinessRows } from './erasure-clickhouse.ts';
import type { ErasureLedger } from './erasure-ledger.ts';
import { scrubChdbFiles } from './erasure-traces.ts';

/**
 * The steps after the mark, in order. Each deletes whatever of the business is still there, so
 * an erasure interrupted anywhere resumes at the step it was in and runs it again.
 */
export const ERASURE_STEPS = [
  'settle',
  'tasks',
  'outbox',
  'idempotency',
  'projection',
  'clickhouse',
  'tokens',
  'cache',
  'traces',
] as const;
export type ErasureStep = (typeof ERASURE_STEPS)[number];
const STEP_ORDER: readonly string[] = [...ERASURE_STEPS, 'done'];

const TASKS_AT_ONCE = 2_000;
const OUTBOX_IDS_AT_ONCE = 50_000;
/** Rounds of ClickHouse deletions before giving up for now (a concurrent rollup backfill). */
const CLICKHOUSE_ROUNDS = 5;

export interface ErasureProgress {
  business: string;
  step: ErasureStep | 'done';
  /** Steps finished, of `total`. */
  done: number;
  total: number;
}

export interface ErasureDeps {
  db: Kysely<Database>;
  clickhouse: ClickHouseClient;
  /** config.clickhouseCluster: deletions then run ON CLUSTER on the replicated tables. */
  cluster: string | undefined;
  now: () => Date;
  /** The master key (and one being rotated out): what opens the master key's kept answers. */
  masterKeys: readonly string[];
  /** Facts per batch when the erasure finishes a projector's batch itself. */
  batchSize: number;
  /**
   * Forgets the business's answers in this process's result cache (in Redis, the one every
   * instance shares), where they would otherwise rest, never served again, until evicted.
   * Other businesses' answers stay.
   */
  forgetCachedAnswers?: (business: string) => Promise<void>;
  /**
   * ClickHouse is chDB in this process: the traces its files keep of the deletion (finished
   * mutations' commands, the parts as they were before it) are removed too.
   */
  chdb?: boolean;
  /** How often a wait looks again. @defaultValue 50 ms */
  pollMs?: number;
  /** Aborted: the erasure stops after the slice in hand; it resumes from its step later. */
  signal?: AbortSignal;
  onProgress?: (progress: ErasureProgress) => void;
  /** Embedded installations: where a finished erasure is recorded for restores (erasure-ledger.ts). */
  ledger?: ErasureLedger;
}

export class ErasureAborted extends Error {
  constructor() {
    super('the erasure was interrupted; it resumes from its step');
  }
}

/**
 * Starts erasing the business (marks it, takes it out of every token) unless an erasure of it
 * is running already. 'not_found' when nothing of it exists and it was never erased.
 */
export async function startErasure(
  deps: Pick<ErasureDeps, 'db' | 'clickhouse' | 'now'>,
  business: string,
): Promise<'started' | 'not_found'> {
  const existing = await findErasure(deps.db, business);
  if (existing?.status === 'running') return 'started';
  const found =
    (await businessInPostgres(deps.db, business)) ||
    (await countBusinessRows(deps.clickhouse, business)) > 0;
  if (!found) return existing ? 'started' : 'not_found';
  await deps.db.transaction().execute(async (trx) => {
    const now = deps.now();
    await markErasure(trx, business, ERASURE_STEPS[0], now);
    const revoked = await removeFromTokens(trx, business, now);
    await saveStep(trx, business, ERASURE_STEPS[0], now, STEP_ORDER, { tokens_revoked: revoked });
  });
  return 'started';
}

/** Runs a started erasure to its end from the step it is in; returns its final record. */
export async function runErasure(deps: ErasureDeps, business: string): Promise<ErasureRow> {
  const row = await findErasure(deps.db, business);
  // The business is not named: the message may reach a log.
  if (!row) throw new Error('no erasure of this business was started');
  let index = row.status === 'done' ? ERASURE_STEPS.length : stepIndex(row.step);
  const report = () =>
    deps.onProgress?.({
      business,
      step: ERASURE_STEPS[index] ?? 'done',
      done: index,
      total: ERASURE_STEPS.length,
    });
  report();
  while (index < ERASURE_STEPS.length) {
    checkAborted(deps);
    const step = ERASURE_STEPS[index] as ErasureStep;
    const counts = await STEPS[step](deps, business, row);
    index += 1;
    const at = deps.now();
    // In the ledger before it shows as done: whoever sees it done (a backup) finds it there.
    if (index === ERASURE_STEPS.length) await deps.ledger?.record(business, at);
    await saveStep(deps.db, business, ERASURE_STEPS[index] ?? 'done', at, STEP_ORDER, counts);
    report();
  }
  return (await findErasure(deps.db, business)) as ErasureRow;
}

export function stepIndex(step: string): number {
  const index = (ERASURE_STEPS as readonly string[]).indexOf(step);
  return index < 0 ? ERASURE_STEPS.length : index;
}

type Counts = Partial<Pick<ErasureRow, 'tokens_revoked' | 'tasks_deleted' | 'facts_deleted'>>;
type Step = (deps: ErasureDeps, business: string, row: ErasureRow) => Promise<Counts | undefined>;

const STEPS: Record<ErasureStep, Step> = {
  async settle(deps) {
    const settled = await olderWritesSettled(deps.db);
    await waitFor(deps, settled);
    return undefined;
  },
  async tasks(deps, business) {
    let deleted = 0;
    for (;;) {
      checkAborted(deps);
      const slice = await deleteTaskSlice(deps.db, business, TASKS_AT_ONCE);
      deleted += slice;
      if (slice < TASKS_AT_ONCE) break;
    }
    await deleteStrayEdges(deps.db, business);
    // A view reading it, with every embed of that view: they would only answer for the rest.
    await deleteViews(deps.db, business);
    return { tasks_deleted: deleted };
  },
  async outbox(deps, business) {
    const range = await outboxIdRange(deps.db);
    if (!range) return undefined;
    for (let after = range.min - 1; after < range.max; after += OUTBOX_IDS_AT_ONCE) {
      checkAborted(deps);
      await deleteOutboxSlice(deps.db, business, after, after + OUTBOX_IDS_AT_ONCE);
    }
    return undefined;
  },
  async idempotency(deps, business) {
    await deleteIdempotencyRecords(deps.db, business);
    const keys = deps.masterKeys.map(sealKey);
    for (const record of await sealedMasterRecords(deps.db)) {
      const text = keys
        .map((key) => unseal(record.response_body, key))
        .find((opened) => opened !== undefined);
      if (text !== undefined && namesBusiness(JSON.parse(text), business)) {
        await deleteMasterRecord(deps.db, record.key);
      }
    }
    return undefined;
  },
  async projection(deps, _business, row) {
    // A batch fixed before the mark may carry the business's facts: its insert must be over
    // before ClickHouse is cleared. Finishing it here (same rows less the business's, same
    // deduplication token) ends the wait even when no projector runs; should its first
    // projector still be sending it, ClickHouse drops whichever copy comes second.
    for (const hold of row.projection_holds) {
      const table = PROJECTION_TABLES[hold.name];
      while (!(await holdPassed(deps.db, hold))) {
        checkAborted(deps);
        if (table) {
          await projectNext({
            db: deps.db,
            clickhouse: deps.clickhouse,
            batchSize: deps.batchSize,
            checkpoint: hold.name,
            table,
            now: deps.now,
          });
        } else await pause(deps);
      }
    }
    return undefined;
  },
  async clickhouse(deps, business) {
    let facts = 0;
    for (let round = 1; ; round++) {
      checkAborted(deps);
      // Between polls of the running deletion, a shutdown stops the wait (the step re-runs).
      const rows = await deleteBusinessRows(deps.clickhouse, business, deps.cluster, (ms) =>
        abortablePause(deps, ms),
      );
      if (round === 1) facts = rows;
      if (
        rows === 0 ||
        (await countBusinessRows(deps.clickhouse, business, undefined, deps.cluster)) === 0
      )
        break;
      if (round >= CLICKHOUSE_ROUNDS) {
        throw new Error('rows of the business keep appearing in ClickHouse; the erasure retries');
      }
    }
    return { facts_deleted: facts };
  },
  async tokens(deps, business) {
    // Again at the end: a token issued for the business while it was being erased.
    return { tokens_revoked: await removeFromTokens(deps.db, business, deps.now()) };
  },
  async cache(deps, business, row) {
    // Moving the watermark with a change of this erasure's own retires every answer that reads
    // the business, in this process, in Redis, and in every other instance; answers of other
    // businesses still hold. The log's own rows of the business lose its name.
    await deps.db.transaction().execute(async (trx) => {
      await forgetBusinessChanges(trx, business, row.id);
      await advanceWatermark(trx, row.id);
    });
    await deps.forgetCachedAnswers?.(business);
    return undefined;
  },
  async traces(deps) {
    // What the engines keep of the deleted rows on disk, as far as they let go of it
    // (docs/operations.md lists what remains, and for how long).
    if (deps.chdb) await scrubChdbFiles(deps.clickhouse, (ms) => abortablePause(deps, ms));
    await vacuumErasedTables(deps.db);
    return undefined;
  },
};

const PROJECTION_TABLES: Record<string, string> = {
  [FACTS_CHECKPOINT]: 'facts',
  [REBUILD_CHECKPOINT]: REBUILD_TABLE,
};

function namesBusiness(value: unknown, business: string): boolean {
  if (Array.isArray(value)) return value.some((item) => namesBusiness(item, business));
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([member, inner]) =>
    (member === 'business' || member === 'businesses') &&
    (inner === business || (Array.isArray(inner) && inner.includes(business)))
      ? true
      : namesBusiness(inner, business),
  );
}

function checkAborted(deps: Pick<ErasureDeps, 'signal'>): void {
  if (deps.signal?.aborted) throw new ErasureAborted();
}

function pause(deps: Pick<ErasureDeps, 'pollMs' | 'signal'>): Promise<void> {
  return abortablePause(deps, deps.pollMs ?? 50);
}

async function abortablePause(deps: Pick<ErasureDeps, 'signal'>, ms: number): Promise<void> {
  checkAborted(deps);
  await new Promise<void>((resolve) => {
    const stop = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      deps.signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    deps.signal?.addEventListener('abort', stop, { once: true });
  });
}

async function waitFor(
  deps: Pick<ErasureDeps, 'pollMs' | 'signal'>,
  condition: () => Promise<boolean>,
): Promise<void> {
  while (!(await condition())) {
    checkAborted(deps);
    await pause(deps);
  }
}
