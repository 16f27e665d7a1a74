import path from 'node:path';
import type { Command } from 'commander';
import { type Config, loadConfig } from '../../../libs/config/config.ts';
import type { BackupManifest } from '../../../libs/lifecycle/backup-manifest.ts';
import { requestBackup } from '../../../libs/lifecycle/control-channel.ts';
import { type LifecycleProgress, takeBackup } from '../../../libs/lifecycle/embedded-backup.ts';
import { type RestoreResult, restoreBackup } from '../../../libs/lifecycle/embedded-restore.ts';
import { openEngines } from '../../../libs/storage/engines.ts';
import { holderOf, refuseWhileServerRuns, requireDataDir } from '../data-directory.ts';
import { progressBar } from '../progress-bar.ts';

const BOTH = { postgres: true, clickhouse: true };

/** Backup and restore copy the embedded engines; servers have their own tools. */
function embeddedOnly(config: Config, command: string): void {
  if (config.embedded.postgres && config.embedded.clickhouse) return;
  throw new Error(
    `${command} copies an embedded installation (PGlite and chDB in DATA_DIR); with DATABASE_URL or CLICKHOUSE_URL set, ` +
      'back up the servers with pg_dump and ClickHouse BACKUP as docs/operations.md ("Backup and restore") describes.',
  );
}

/** A bar over the steps of the work, on stderr (progress-bar.ts). */
function showProgress(label: string): { onProgress: LifecycleProgress; stop(): void } {
  const bar = progressBar(label, 'steps');
  let started = false;
  return {
    onProgress({ done, total }) {
      if (!started) bar.start(total, done);
      started = true;
      bar.update(done);
    },
    stop: () => bar.stop(),
  };
}

function summary(manifest: BackupManifest): string {
  const facts = manifest.clickhouse.find((table) => table.table === 'facts')?.rows ?? 0;
  return (
    `${manifest.postgres.tasks} tasks, ${manifest.postgres.outbox} outbox facts, ` +
    `${facts} ClickHouse facts (projector checkpoint ${manifest.checkpoint.xid}.${manifest.checkpoint.id}, ` +
    `taken ${manifest.created_at})`
  );
}

export function registerBackup(program: Command): void {
  program
    .command('backup')
    .description(
      'Copy an embedded installation (DATA_DIR) into a new directory, consistently, while it runs: ' +
        'through the running server when one holds DATA_DIR, directly otherwise.',
    )
    .requiredOption('--to <dir>', 'the backup directory (new, or empty)')
    .action(async (options: { to: string }) => {
      const config = loadConfig();
      embeddedOnly(config, 'backup');
      await requireDataDir(config, BOTH);
      const to = path.resolve(options.to);
      const progress = showProgress('backup');
      try {
        const holder = await holderOf(config, BOTH);
        let manifest: BackupManifest;
        if (holder !== undefined) {
          manifest = await requestBackup(config.dataDir, to, progress.onProgress);
        } else {
          const engines = await openEngines(config);
          try {
            manifest = await takeBackup({
              postgres: engines.postgres,
              clickhouse: engines.clickhouse.client,
              dataDir: config.dataDir,
              to,
              onProgress: progress.onProgress,
            });
          } finally {
            await engines.close();
          }
        }
        progress.stop();
        process.stdout.write(`Backed up ${summary(manifest)} to ${to}.\n`);
      } finally {
        progress.stop();
      }
    });
  program
    .command('restore')
    .description(
      'Bring a backup (from `backup`) back into DATA_DIR: a new or empty one, or in place of an ' +
        'installation with --replace. The businesses erased after the backup was taken (in the ' +
        "erasure ledgers: the backup's, the replaced installation's, --erasures) are erased again. " +
        'A server started on it projects whatever the backup had not yet projected.',
    )
    .requiredOption('--from <dir>', 'the backup directory')
    .option(
      '--replace',
      'put the backup in place of the installation in DATA_DIR (moved aside to DATA_DIR.replaced-<time>)',
    )
    .option(
      '--erasures <file>',
      "an erasure ledger (an installation's DATA_DIR/erasures.json) whose businesses to erase again",
    )
    .action(async (options: { from: string; replace?: boolean; erasures?: string }) => {
      const config = loadConfig();
      embeddedOnly(config, 'restore');
      await refuseWhileServerRuns(config, BOTH, 'a restore replaces DATA_DIR.');
      const progress = showProgress('restore');
      try {
        const restored = await restoreBackup({
          from: path.resolve(options.from),
          dataDir: config.dataDir,
          dataPaths: config.dataPaths,
          replace: options.replace === true,
          erasureLedgers: options.erasures ? [path.resolve(options.erasures)] : [],
          masterKeys: [config.masterKey, config.masterKeyPrevious].filter(
            (key): key is string => key !== undefined,
          ),
          batchSize: config.projectorBatchSize,
          onProgress: progress.onProgress,
        });
        progress.stop();
        process.stdout.write(`${restoreReport(restored, config.dataDir)}\n`);
      } finally {
        progress.stop();
      }
    });
}

function restoreReport(restored: RestoreResult, dataDir: string): string {
  const erased = restored.reerased.map((entry) => `${entry.business} (erased ${entry.erased_at})`);
  return [
    `Restored ${summary(restored.manifest)} into ${dataDir}.`,
    erased.length > 0
      ? `Erased again, as erased after the backup was taken: ${erased.join(', ')}.`
      : `No business to erase again (the erasure ledgers name ${restored.ledger.length}).`,
    ...(restored.replacedKeptIn
      ? [
          `The installation it replaced is in ${restored.replacedKeptIn}; delete it once you are satisfied.`,
        ]
      : []),
  ].join('\n');
}
