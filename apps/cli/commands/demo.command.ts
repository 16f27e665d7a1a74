import type { Command } from 'commander';
import { BLOCKED_ROLLUP_NAMES } from '../../../libs/analytics/sources/rollups.ts';
import { loadConfig } from '../../../libs/config/config.ts';
import { generateFacts } from '../../../libs/demo/fact-generator.ts';
import { backfillRollups } from '../../../libs/projection/rollup-backfill.ts';
import { RollupBuilds, rollupsNeedingBackfill } from '../../../libs/projection/rollup-builds.ts';
import { advanceWatermark } from '../../../libs/projection/watermark.ts';
import { migrateClickHouse, openClickHouse } from '../../../libs/storage/clickhouse.ts';
import { openPostgres } from '../../../libs/storage/postgres.ts';
import { migratePostgres } from '../../../libs/storage/postgres-migrations.ts';
import { announceNewDataDir, refuseWhileServerRuns } from '../data-directory.ts';
import { progressBar } from '../progress-bar.ts';

const BOTH = { postgres: true, clickhouse: true };

const wholeNumber = (value: string): number => {
  if (!/^\d+$/.test(value)) throw new Error(`expected a whole number, got "${value}"`);
  return Number(value);
};

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description(
      'Load realistic generated facts straight into ClickHouse (embedded: stop the server first, chDB allows one process per data directory). Creates the data directory (DATA_DIR) when it does not exist.',
    )
    .requiredOption('--facts <n>', 'how many facts to generate', wholeNumber)
    .option('--seed <n>', 'same seed, same facts', wholeNumber, 1)
    .option('--businesses <n>', 'how many businesses (biz-0, biz-1, …)', wholeNumber, 20)
    .action(async (options: { facts: number; seed: number; businesses: number }) => {
      const config = loadConfig();
      await refuseWhileServerRuns(
        config,
        BOTH,
        'while it runs, add data through its API (POST /api/v1/tasks).',
      );
      const created = await announceNewDataDir(config, BOTH);
      const clickhouse = await openClickHouse({
        url: config.clickhouseUrl,
        dataDir: config.dataPaths.clickhouse,
      });
      await migrateClickHouse(clickhouse.client);
      created();
      // Rollups complete before the load (facts empty) stay complete: the views fill them as
      // facts arrive. Rollups still waiting for a backfill over older facts keep waiting.
      const builds = await new RollupBuilds(clickhouse.client).start();
      await rollupsNeedingBackfill(builds);
      const bar = progressBar('facts', 'facts');
      bar.start(options.facts, 0);
      await generateFacts(clickhouse.client, {
        facts: options.facts,
        seed: options.seed,
        businesses: options.businesses,
        now: new Date(),
        onProgress: (written) => bar.update(written),
      });
      bar.stop();
      // Cached answers computed before these facts must not be served again.
      const postgres = await openPostgres({
        url: config.databaseUrl,
        dataDir: config.dataPaths.postgres,
      });
      try {
        await migratePostgres(postgres.db);
        await advanceWatermark(postgres.db);
        // Generated facts do not say which tasks they block: rollups keeping blocked changes
        // are filled again, working them out from the facts (blocked-replay.ts).
        const rollupBar = progressBar('rollups', 'facts');
        await backfillRollups({
          db: postgres.db,
          clickhouse: clickhouse.client,
          builds,
          rollups: BLOCKED_ROLLUP_NAMES,
          onProgress: ({ done, total }) => {
            if (done === 0) rollupBar.start(total, 0);
            rollupBar.update(done);
          },
        });
        rollupBar.stop();
      } finally {
        await builds.close();
        await postgres.close();
      }
      process.stdout.write(
        `Loaded ${options.facts} facts into ClickHouse (${clickhouse.kind}) for businesses biz-0…biz-${options.businesses - 1}.\n`,
      );
      await clickhouse.close();
    });
}
