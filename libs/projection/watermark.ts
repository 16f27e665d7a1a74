import type { Db } from '../storage/database.ts';
import { FACTS_CHECKPOINT } from './projector.ts';

/**
 * Moves the watermark for facts that reached ClickHouse without the projector (the demo loader),
 * so no cached answer computed before them is served again.
 */
export async function advanceWatermark(db: Db): Promise<void> {
  await db
    .insertInto('projector_checkpoints')
    .values({ name: FACTS_CHECKPOINT })
    .onConflict((conflict) => conflict.column('name').doUpdateSet({ updated_at: new Date() }))
    .execute();
}
