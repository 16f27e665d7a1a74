import type { Db } from '../storage/database.ts';
import { logErasureChange, logEverythingChanged } from './projection-changes.ts';
import { FACTS_CHECKPOINT } from './projector.ts';

/**
 * Moves the watermark for facts that reached or left ClickHouse without the projector (the demo
 * loader, an erasure), so no cached answer computed before them is served again, whole or in
 * part. `erasure` (its id): only the facts of the business it erased left, and only answers
 * reading that business are computed afresh.
 */
export async function advanceWatermark(db: Db, erasure?: string): Promise<void> {
  // The change is logged while the checkpoint row is locked, as a batch's commit logs its own:
  // log rows then become visible in the order they are numbered.
  if (!db.isTransaction) {
    await db.transaction().execute((trx) => advanceWatermark(trx, erasure));
    return;
  }
  await db
    .insertInto('projector_checkpoints')
    .values({ name: FACTS_CHECKPOINT })
    .onConflict((conflict) => conflict.column('name').doUpdateSet({ updated_at: new Date() }))
    .execute();
  if (erasure === undefined) await logEverythingChanged(db, FACTS_CHECKPOINT);
  else await logErasureChange(db, FACTS_CHECKPOINT, erasure);
}
