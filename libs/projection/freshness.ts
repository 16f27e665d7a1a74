import type { Db } from '../storage/database.ts';
import { loadCheckpoint, oldestUnprojected } from './outbox-reader.ts';
import { FACTS_CHECKPOINT } from './projector.ts';

export interface Freshness {
  /** Every fact that happened before this instant is in ClickHouse. */
  dataAsOf: Date;
  /** How long the oldest unprojected fact has been waiting; 0 when nothing waits. */
  lagMs: number;
}

export async function projectionFreshness(db: Db, now: Date): Promise<Freshness> {
  const checkpoint = await loadCheckpoint(db, FACTS_CHECKPOINT);
  const oldest = await oldestUnprojected(db, checkpoint.cursor);
  if (!oldest) return { dataAsOf: now, lagMs: 0 };
  return { dataAsOf: oldest, lagMs: Math.max(0, now.getTime() - oldest.getTime()) };
}
