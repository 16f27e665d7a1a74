import type { Kysely } from 'kysely';
import { loadCheckpoint, type Position } from '../projection/outbox-reader.ts';
import {
  FACTS_CHECKPOINT,
  holdLiveProjector,
  releaseLiveProjector,
} from '../projection/projector.ts';
import type { Database } from '../storage/database.ts';

export interface HeldProjector {
  /** Where the projector stands still: ClickHouse holds exactly the outbox up to here. */
  cursor: Position;
  /** Throws unless the checkpoint is still `cursor` with nothing pending (the hold held). */
  verify(db?: Kysely<Database>): Promise<void>;
  release(): Promise<void>;
}

export interface HoldOptions {
  /** How long a batch in flight may take to finish (default 60 s). */
  settleMs?: number;
  /**
   * Finishes a batch left pending (its same rows under the same deduplication token, so it
   * lands once even if a live projector finishes it too); without it, the live one must.
   */
  finishPending?: () => Promise<unknown>;
}

const RENEW_MS = 5_000;
const POLL_MS = 100;

/**
 * Holds every live projector still (the rebuild's swap hold, renewed while held so a crashed
 * holder cannot stop projection for more than 30 s) and waits for the batch in flight, if any,
 * to finish: from then until `release` the checkpoint does not move, so copies of ClickHouse
 * and Postgres taken meanwhile agree, whatever their order and however long they take.
 */
export async function holdProjector(
  db: Kysely<Database>,
  options: HoldOptions = {},
): Promise<HeldProjector> {
  await holdLiveProjector(db, new Date());
  const renew = setInterval(() => {
    holdLiveProjector(db, new Date()).catch(() => {});
  }, RENEW_MS);
  const release = async () => {
    clearInterval(renew);
    await releaseLiveProjector(db);
  };
  try {
    const deadline = Date.now() + (options.settleMs ?? 60_000);
    for (;;) {
      // Locked, so a batch starting or finishing right now is waited for.
      const checkpoint = await db
        .transaction()
        .execute((trx) => loadCheckpoint(trx, FACTS_CHECKPOINT, true));
      if (!checkpoint.pending) {
        const cursor = checkpoint.cursor;
        return {
          cursor,
          async verify(at = db) {
            const now = await loadCheckpoint(at, FACTS_CHECKPOINT);
            if (
              now.pending ||
              String(now.cursor.xid) !== String(cursor.xid) ||
              Number(now.cursor.id) !== Number(cursor.id)
            ) {
              throw new Error(
                'The projector moved while it was held (was the hold lost?); take the backup again.',
              );
            }
          },
          release,
        };
      }
      if (Date.now() > deadline) {
        throw new Error(
          'The projector did not finish its batch in flight (is a projector running, is ClickHouse failing?); try again.',
        );
      }
      await options.finishPending?.().catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  } catch (error) {
    await release();
    throw error;
  }
}
