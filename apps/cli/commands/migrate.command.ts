import type { Command } from 'commander';
import { loadConfig } from '../../../libs/config/config.ts';
import { openEngines } from '../../../libs/storage/engines.ts';

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('Apply Postgres migrations and ClickHouse DDL, then exit.')
    .action(async () => {
      const engines = await openEngines(loadConfig());
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
