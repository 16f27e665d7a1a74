import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import { loadConfig } from '../../../libs/config/config.ts';
import { rebuildFacts } from '../../../libs/projection/rebuild.ts';
import { openEngines } from '../../../libs/storage/engines.ts';

export function registerProjector(program: Command): void {
  const projector = program
    .command('projector')
    .description('Operate the outbox → ClickHouse projection.');
  projector
    .command('rebuild')
    .description(
      'Re-project every outbox fact into a fresh ClickHouse table and swap it in atomically; ' +
        'queries and the live projector keep running meanwhile.',
    )
    .option('--batch-size <facts>', 'facts per ClickHouse insert', '20000')
    .action(async (options: { batchSize: string }) => {
      const batchSize = Number(options.batchSize);
      if (!Number.isInteger(batchSize) || batchSize < 1) {
        throw new Error('--batch-size must be a positive whole number');
      }
      const engines = await openEngines(loadConfig());
      // Progress goes to stderr so stdout stays the one-line summary scripts can read.
      const bar = new cliProgress.SingleBar(
        {
          format: 'rebuild [{bar}] {percentage}% | {value}/{total} facts | {eta_formatted} left',
          stream: process.stderr,
          // Piped (CI, logs): a line every few seconds instead of nothing at all.
          noTTYOutput: true,
          notTTYSchedule: 5_000,
        },
        cliProgress.Presets.shades_classic,
      );
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
        });
        bar.stop();
        const seconds = (performance.now() - started) / 1000;
        process.stdout.write(
          `Rebuilt facts: ${facts} facts re-projected in ${seconds.toFixed(1)} s and swapped in.\n`,
        );
      } finally {
        bar.stop();
        await engines.close();
      }
    });
}
