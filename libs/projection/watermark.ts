import type { Db } from '../storage/database.ts';
import { logEverythingChanged } from './projection-changes.ts';
import { FACTS_CHECKPOINT } from './projector.ts';

/**
 * Moves the watermark for facts that reached or left ClickHouse without the projector (the demo
 * loader, an erasure), so no cached answer computed before them is served again, whole or in
 * part. Call it inside a transaction to log both moves at once.
 */
export async function advanceWatermark(db: Db): Promise<void> {
  await db
    .insertInto('projector_checkpoints')
    .values({ name: FACTS_CHECKPOINT })
    .onConflict((conflict) => conflict.column('name').doUpdateSet({ updated_at: new Date() }))
    .execute();
  await logEverythingChanged(db);
}
