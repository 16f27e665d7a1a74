import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import type { Config } from '../../../libs/config/config.ts';
import { loadConfig } from '../../../libs/config/config.ts';
import { holdProjector } from '../../../libs/lifecycle/projector-hold.ts';
import { rebuildFacts } from '../../../libs/projection/rebuild.ts';
import { backfillRollups } from '../../../libs/projection/rollup-backfill.ts';
import { RollupBuilds } from '../../../libs/projection/rollup-builds.ts';
import { openEngines } from '../../../libs/storage/engines.ts';
import { openPostgres } from '../../../libs/storage/postgres.ts';
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
  projector
    .command('hold')
    .description(
      'Hold every live projector still (after the batch in flight), run <command> and release: ' +
        'ClickHouse and Postgres copied meanwhile agree (server backups, docs/operations.md). ' +
        'The command sees the checkpoint as CAIRN_HELD_CHECKPOINT.',
    )
    .argument('<command...>', 'the command and its arguments, after --')
    .action(async (command: string[]) => {
      const config = loadConfig();
      const use = { postgres: true, clickhouse: false };
      await requireDataDir(config, use);
      await refuseWhileServerRuns(
        config,
        use,
        'on embedded engines `backup` holds the projector inside the server.',
      );
      const pg = await openPostgres({
        url: config.databaseUrl,
        dataDir: config.dataPaths.postgres,
        timeouts: config.postgresTimeouts,
      });
      try {
        const held = await holdProjector(pg.db);
        const checkpoint = `${held.cursor.xid}.${held.cursor.id}`;
        let code: number | null;
        try {
          process.stderr.write(`Projector held at checkpoint ${checkpoint}.\n`);
          code = await runChild(command, { CAIRN_HELD_CHECKPOINT: checkpoint });
          await held.verify();
        } finally {
          await held.release();
        }
        if (code !== 0) {
          throw new Error(
            `${command[0]} exited with ${code ?? 'a signal'}; the projector is released.`,
          );
        }
        process.stdout.write(
          `Ran ${command[0]} with the projector held at checkpoint ${checkpoint}; released.\n`,
        );
      } finally {
        await pg.close();
      }
    });
}

/** Runs a command with this terminal; resolves with its exit code (null after a signal). */
function runChild(command: string[], env: Record<string, string>): Promise<number | null> {
  const [file = '', ...args] = command;
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: 'inherit', env: { ...process.env, ...env } });
    child.once('error', reject);
    child.once('exit', (code) => resolve(code));
  });
}
