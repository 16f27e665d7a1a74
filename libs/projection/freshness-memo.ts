import { sql } from 'kysely';
import type { Freshness } from '../analytics/execute/answer-freshness.ts';
import type { Postgres } from '../storage/postgres.ts';
import {
  freshnessAt,
  type ProjectionReading,
  projectionFreshness,
  readProjection,
} from './projection-freshness.ts';

/** Announced by `sql/postgres/0008_projection_notify.sql` in sessions that opt in. */
const PROJECTION_CHANNEL = 'cairn_projection';

/** An upper bound on trusting a remembered reading, should a change ever go unannounced. */
const TRUST_MS = 1_000;

export interface FreshnessSource {
  read(now: Date): Promise<Freshness>;
  close(): Promise<void>;
}

/**
 * Freshness read from Postgres once and remembered until the outbox or a checkpoint changes, so
 * a cached answer costs no database round trip. Only on embedded Postgres: this process holds
 * the data directory and its one session does every write, and a notification is delivered
 * before the statement that raised it returns. On a server, writers and projectors may be other
 * processes, whose notifications arrive some time after their commits: each answer reads
 * Postgres there.
 */
export async function openFreshness(postgres: Postgres): Promise<FreshnessSource> {
  if (postgres.kind !== 'pglite') {
    return { read: (now) => projectionFreshness(postgres.db, now), close: async () => {} };
  }
  let remembered: { reading: ProjectionReading; until: number } | undefined;
  // Bumped by every change, so a reading that raced one is not kept.
  let generation = 0;
  const forget = () => {
    generation++;
    remembered = undefined;
  };
  const listening = await postgres.listen(PROJECTION_CHANNEL, {
    onNotify: forget,
    onState: forget,
  });
  await sql`select set_config('cairn.announce_projection', 'on', false)`.execute(postgres.db);
  return {
    async read(now) {
      if (remembered && performance.now() < remembered.until) {
        return freshnessAt(remembered.reading, now);
      }
      const started = generation;
      const reading = await readProjection(postgres.db);
      if (started === generation) {
        remembered = { reading, until: performance.now() + TRUST_MS };
      }
      return freshnessAt(reading, now);
    },
    close: () => listening.close(),
  };
}
