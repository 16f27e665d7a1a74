// A child process for test/storage/pg-row-promotion.test.ts: reads `QUERIES` results of 100 rows each,
// one at a time, under `--trace-gc-nvp` (the test reads V8's young-generation figures from
// stdout). `VIA=cairn` sends them through Cairn's own Postgres adapter; `VIA=pg` through a pg
// client's own promise with its `query_timeout`, the way the adapter sent them before;
// `VIA=callback` through the adapter's row-callback layer alone (postgres-row-callback.ts).
import { sql } from 'kysely';
import pg from 'pg';
import { openPostgres } from '../../libs/storage/postgres.ts';
import { sendWithCallback } from '../../libs/storage/postgres-row-callback.ts';

const STATEMENT = `select 'task-' || n as gid, 'a task named ' || n as name, n as edge_id
  from generate_series(1, 100) as n`;
const queries = Number(process.env.QUERIES);
const url = process.env.DATABASE_URL!;

if (process.env.VIA === 'cairn') {
  const postgres = await openPostgres({ url, poolSize: 1 });
  try {
    for (let i = 0; i < queries; i++) await sql.raw(STATEMENT).execute(postgres.db);
  } finally {
    await postgres.close();
  }
} else if (process.env.VIA === 'callback') {
  // No query_timeout: pg would hand its own callback over after constructing the Query.
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const send = sendWithCallback(client);
  try {
    for (let i = 0; i < queries; i++) await send([STATEMENT]);
  } finally {
    await client.end();
  }
} else {
  const client = new pg.Client({ connectionString: url, query_timeout: 30_000 });
  await client.connect();
  try {
    for (let i = 0; i < queries; i++) await client.query(STATEMENT);
  } finally {
    await client.end();
  }
}
