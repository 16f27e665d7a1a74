import type { AnalyticsDeps } from '../../libs/analytics/query.service.ts';
import { ROLLUP_NAMES, type RollupName } from '../../libs/analytics/sources/rollups.ts';
import { changesSince } from '../../libs/projection/projection-changes.ts';
import { projectionFreshness } from '../../libs/projection/projection-freshness.ts';
import { drainOutbox } from '../../libs/projection/projector.ts';
import type { Engines } from '../../libs/storage/engines.ts';
import { waitFor } from './engines.ts';
import { projectionTotals } from './projection-invariants.ts';

/**
 * Read-side dependencies over a test's engines. Rollups start complete here (a test's facts
 * all arrive through their views); pass `rollups: []` to answer from facts only.
 */
export function analyticsDeps(
  engines: Pick<Engines, 'clickhouse' | 'postgres'>,
  options: Partial<Omit<AnalyticsDeps, 'rollups'>> & { rollups?: readonly RollupName[] } = {},
): AnalyticsDeps {
  const ready = new Set(options.rollups ?? ROLLUP_NAMES);
  return {
    clickhouse: engines.clickhouse.client,
    freshness: (now) => projectionFreshness(engines.postgres.db, now),
    changes: (from, to, businesses) => changesSince(engines.postgres.db, from, to, businesses),
    now: () => new Date(),
    maxRows: 10_000,
    timeoutMs: 60_000,
    staleAfterMs: 60_000,
    ...options,
    rollups: () => ready,
  };
}

/**
 * Projects every outbox fact. One drain can stop short on a shared Postgres server: facts wait
 * until every older transaction on the server (any database's) has ended, so this drains until
 * ClickHouse holds as many facts as the outbox. A small `batchSize` spreads the facts over many
 * inserts, so the rollups hold them in separate, unmerged parts.
 */
export async function projectAll(
  engines: Pick<Engines, 'postgres' | 'clickhouse'>,
  batchSize = 1000,
): Promise<void> {
  const deps = { db: engines.postgres.db, clickhouse: engines.clickhouse.client, batchSize };
  await waitFor(
    async () => {
      await drainOutbox(deps);
      const totals = await projectionTotals(deps.db, deps.clickhouse);
      return totals.rows >= totals.outbox;
    },
    { timeoutMs: 120_000, intervalMs: 100 },
  );
}
