// Child process for the crash test: projects one batch and is SIGKILLed between the
// ClickHouse insert and the checkpoint, the worst moment to die.
import { projectBatch } from '../../libs/projection/projector.ts';
import { migrateClickHouse, openClickHouse } from '../../libs/storage/clickhouse.ts';
import { openPostgres } from '../../libs/storage/postgres.ts';

const [databaseUrl, chDir, batchSize] = process.argv.slice(2);
const pg = await openPostgres({ url: databaseUrl });
const ch = await openClickHouse({ dataDir: chDir });
await migrateClickHouse(ch.client);
await projectBatch({
  db: pg.db,
  clickhouse: ch.client,
  batchSize: Number(batchSize),
  afterInsert: () => {
    process.kill(process.pid, 'SIGKILL');
  },
});
