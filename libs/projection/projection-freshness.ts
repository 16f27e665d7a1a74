import { sql } from 'kysely';
import type { Freshness } from '../analytics/execute/answer-freshness.ts';
import type { Db } from '../storage/database.ts';
import { LAST_MARK, parseMark } from './projection-changes.ts';
import { FACTS_CHECKPOINT } from './projector.ts';

export type { Freshness };

/*
 * Projection freshness: where the projector stands, read from Postgres (its checkpoint and the
 * outbox), turned into the answer freshness analytics reports (`answer-freshness.ts`).
 */

/** The projection's state as Postgres has it: the oldest fact past the cursor, and the watermark. */
export interface ProjectionReading {
  oldest: Date | null;
  watermark: string;
  /** The last logged change (projection-changes.ts), read in the same snapshot. */
  changes: Freshness['changes'];
}

/**
 * One read-only round trip per analytics answer (cached or not): the oldest fact past the projector's cursor.
 * A checkpoint that does not exist yet is the start of the outbox, as it is to the projector.
 */
export async function projectionFreshness(db: Db, now: Date): Promise<Freshness> {
  return freshnessAt(await readProjection(db), now);
}

export async function readProjection(db: Db): Promise<ProjectionReading> {
  const result = await sql<{ occurred_at: Date | null; watermark: string; mark: string | null }>`
    select concat_ws('/', c.cursor_xid::text, c.cursor_id::text, c.pending_id::text,
      c.updated_at::text) as watermark, ${LAST_MARK} as mark, (
      select o.occurred_at from outbox o
      where (o.xid, o.id) > (coalesce(c.cursor_xid, '0'::xid8), coalesce(c.cursor_id, 0))
      order by o.xid, o.id
      limit 1
    ) as occurred_at
    from (select 1) as one
    left join projector_checkpoints c on c.name = ${FACTS_CHECKPOINT}`.execute(db);
  return {
    oldest: result.rows[0]?.occurred_at ?? null,
    watermark: result.rows[0]?.watermark ?? '',
    changes: parseMark(result.rows[0]?.mark ?? null),
  };
}

/** What a reading means at `now`: with nothing waiting, every fact up to `now` is projected. */
export function freshnessAt(
  { oldest, watermark, changes }: ProjectionReading,
  now: Date,
): Freshness {
  if (!oldest) return { dataAsOf: now, lagMs: 0, watermark, changes };
  const lagMs = Math.max(0, now.getTime() - oldest.getTime());
  return { dataAsOf: oldest, lagMs, watermark, changes };
}
