// A child process for test/v8-pretenuring.test.ts: reads `QUERIES` results of 100 rows each
// through Cairn's own Postgres adapter, one at a time, under `--trace-gc-nvp` (the test reads
// V8's young-generation figures from stdout). With `PRETENURING=off` it first imports the
// module the server imports first.
import { sql } from 'kysely';
import { openPostgres } from '../../libs/storage/postgres.ts';

if (process.env.PRETENURING === 'off') await import('../../apps/server/v8-pretenuring.ts');
const postgres = await openPostgres({ url: process.env.DATABASE_URL!, poolSize: 1 });
try {
  for (let i = 0; i < Number(process.env.QUERIES); i++) {
    await sql`select 'task-' || n as gid, 'a task named ' || n as name, n as edge_id
      from generate_series(1, 100) as n`.execute(postgres.db);
  }
} finally {
  await postgres.close();
}
