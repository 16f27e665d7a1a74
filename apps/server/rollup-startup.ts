import type { ClickHouseClient } from '@clickhouse/client';
import type { Kysely } from 'kysely';
import type { Config } from '../../libs/config/config.ts';
import type { Logger } from '../../libs/observability/logger.ts';
import { backfillRollups } from '../../libs/projection/rollup-backfill.ts';
import { type RollupBuilds, rollupsNeedingBackfill } from '../../libs/projection/rollup-builds.ts';
import type { Database } from '../../libs/storage/database.ts';

export interface RollupBackfill {
  /** Resolves once the backfill has stopped (finished, failed or cut short). */
  stop(): Promise<void>;
}

/**
 * Rollups that do not yet hold the facts already in ClickHouse (an installation that predates
 * them) are filled in the background while queries keep answering from facts. Only a process
 * running every role does it by itself: with separate projector processes, two could fill the
 * same rollup at once, so there an operator runs `projector backfill-rollups` once.
 */
export async function startRollupBackfill(deps: {
  config: Pick<Config, 'role'>;
  db: Kysely<Database>;
  clickhouse: ClickHouseClient;
  rollups: RollupBuilds;
  logger: Logger;
  /** Told the progress too, for the fill metric. */
  onProgress?: (progress: { done: number; total: number }) => void;
}): Promise<RollupBackfill> {
  const missing = await rollupsNeedingBackfill(deps.rollups);
  if (missing.length === 0) return { stop: async () => {} };
  if (deps.config.role !== 'all') {
    deps.logger.warn(
      { rollups: missing },
      'rollups are not filled: queries read facts until `npm run cli -- projector backfill-rollups` runs',
    );
    return { stop: async () => {} };
  }
  const abort = new AbortController();
  let lastLog = 0;
  const running = backfillRollups({
    db: deps.db,
    clickhouse: deps.clickhouse,
    builds: deps.rollups,
    rollups: missing,
    signal: abort.signal,
    onProgress: ({ done, total }) => {
      deps.onProgress?.({ done, total });
      if (Date.now() - lastLog < 5_000 && done < total) return;
      lastLog = Date.now();
      deps.logger.info({ done, total }, 'filling rollups from facts; queries read facts meanwhile');
    },
  })
    .then(({ facts }) => {
      if (!abort.signal.aborted) deps.logger.info({ facts }, 'rollups filled; queries use them');
    })
    .catch((error: unknown) => {
      if (!abort.signal.aborted) {
        deps.logger.error({ err: error }, 'filling rollups failed: queries keep reading facts');
      }
    });
  return {
    async stop() {
      abort.abort();
      await running;
    },
  };
}
