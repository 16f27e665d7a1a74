import type { Command } from 'commander';
import { loadConfig } from '../../../libs/config/config.ts';
import { openEngines } from '../../../libs/storage/engines.ts';
import { announceNewDataDir, refuseWhileServerRuns } from '../data-directory.ts';

const BOTH = { postgres: true, clickhouse: true };

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description(
      'Apply Postgres migrations and ClickHouse DDL, then exit. Creates the data directory (DATA_DIR) when it does not exist.',
    )
    .action(async () => {
      const config = loadConfig();
      await refuseWhileServerRuns(
        config,
        BOTH,
        'the server applies migrations itself at start-up.',
      );
      const created = await announceNewDataDir(config, BOTH);
      const engines = await openEngines(config);
      created();
      const rows = await engines.postgres.db
        .selectFrom('schema_migrations')
        .select(['name', 'applied_at'])
        .orderBy('name')
        .execute();
      for (const row of rows)
        process.stdout.write(`${row.name}  ${row.applied_at.toISOString()}\n`);
      process.stdout.write(
        `Postgres (${engines.postgres.kind}) and ClickHouse (${engines.clickhouse.kind}) are up to date.\n`,
      );
      await engines.close();
    });
}
