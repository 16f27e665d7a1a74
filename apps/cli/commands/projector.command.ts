import type { Command } from 'commander';
import type { Config } from '../../../libs/config/config.ts';
import { loadConfig } from '../../../libs/config/config.ts';
import { rebuildFacts } from '../../../libs/projection/rebuild.ts';
import { backfillRollups } from '../../../libs/projection/rollup-backfill.ts';
import { RollupBuilds } from '../../../libs/projection/rollup-builds.ts';
import { openEngines } from '../../../libs/storage/engines.ts';
import { refuseWhileServerRuns, requireDataDir } from '../data-directory.ts';
import { progressBar } from '../progress-bar.ts';

const BOTH = { postgres: true, clickhouse: true };

/** The projector's data as it is: never a new, empty directory, never beside its server. */
async function existingData(meanwhile: string): Promise<Config> {
  const config = loadConfig();
  await requireDataDir(config, BOTH);
  await refuseWhileServerRuns(config, BOTH, meanwhile);
  return config;
}

export function registerProjector(program: Command): void {
  const projector = program
    .command('projector')
    .description('Operate the outbox → ClickHouse projection.');
  projector
    .command('rebuild')
    .description(
      'Rebuild facts in a fresh ClickHouse table (facts the outbox retention removed are copied ' +
        'from the old one, every other fact re-projected from the outbox) and swap it in ' +
        'atomically; queries and the live projector keep running meanwhile.',
    )
    .option('--batch-size <facts>', 'facts per ClickHouse insert', '20000')
    .action(async (options: { batchSize: string }) => {
      const batchSize = Number(options.batchSize);
      if (!Number.isInteger(batchSize) || batchSize < 1) {
        throw new Error('--batch-size must be a positive whole number');
      }
      const engines = await openEngines(
        await existingData(
          'on embedded engines a rebuild runs with the server stopped (with server engines, beside it).',
        ),
      );
      const bar = progressBar('rebuild', 'facts');
      const rollupBar = progressBar('rollups', 'facts');
      const started = performance.now();
      try {
        bar.start(0, 0);
        const { facts } = await rebuildFacts({
          db: engines.postgres.db,
          clickhouse: engines.clickhouse.client,
          batchSize,
          onProgress: ({ projected, total }) => {
            bar.setTotal(total);
            bar.update(projected);
          },
          onRollupProgress: ({ done, total }) => {
            if (done === 0) {
              bar.stop();
              rollupBar.start(total, 0);
            }
            rollupBar.update(done);
          },
        });
        bar.stop();
        rollupBar.stop();
        const seconds = (performance.now() - started) / 1000;
        process.stdout.write(
          `Rebuilt facts: ${facts} facts re-projected in ${seconds.toFixed(1)} s and swapped in.\n`,
        );
      } finally {
        bar.stop();
        rollupBar.stop();
        await engines.close();
      }
    });
  projector
    .command('backfill-rollups')
    .description(
      'Fill the rollups from the facts already in ClickHouse (after an upgrade that added them, ' +
        'or facts loaded by hand). Queries answer from facts until it completes; the projector ' +
        'keeps running. A server started with CAIRN_ROLE=all does this by itself at start-up.',
    )
    .action(async () => {
      const engines = await openEngines(
        await existingData('a server started with CAIRN_ROLE=all backfills by itself at start-up.'),
      );
      const builds = await new RollupBuilds(engines.clickhouse.client).start();
      const bar = progressBar('rollups', 'facts');
      const started = performance.now();
      try {
        bar.start(0, 0);
        const { facts } = await backfillRollups({
          db: engines.postgres.db,
          clickhouse: engines.clickhouse.client,
          builds,
          onProgress: ({ done, total }) => {
            bar.setTotal(total);
            bar.update(done);
          },
        });
        bar.stop();
        const seconds = (performance.now() - started) / 1000;
        process.stdout.write(
          `Backfilled rollups from ${facts} facts in ${seconds.toFixed(1)} s; queries use them now.\n`,
        );
      } finally {
        bar.stop();
        await builds.close();
        await engines.close();
      }
    });
}
