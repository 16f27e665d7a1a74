import type { ClickHouseClient } from '@clickhouse/client';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface BusinessTable {
  name: string;
  engine: string;
}

/**
 * Every table of the database with a `business` column: facts, every rollup, and whatever a
 * later migration adds (a rebuild's table included), so nothing is forgotten by name. Table
 * names come from the engine and are checked before they are written into a statement
 * (identifiers cannot be bound).
 */
async function businessTables(clickhouse: ClickHouseClient): Promise<BusinessTable[]> {
  const result = await clickhouse.query({
    query: `SELECT name, engine FROM system.tables
      WHERE database = currentDatabase()
        AND name IN (SELECT table FROM system.columns
          WHERE database = currentDatabase() AND name = 'business')
      ORDER BY name`,
    format: 'JSONEachRow',
  });
  const tables = await result.json<BusinessTable>();
  return tables.filter((table) => IDENTIFIER.test(table.name));
}

/**
 * Deletes the business's rows from every table that stores them (MergeTree engines; on a
 * cluster the replicated `_local` tables, ON CLUSTER) and waits until the deletions are done.
 * Returns the rows there were.
 *
 * A single node is not asked to wait inside the statement (`mutations_sync`): embedded chDB runs
 * one statement at a time, and a mutation rewriting every part that holds the business (4M facts:
 * about 18 s) would hold every other business's queries that long. The mutation runs in the
 * engine's background pool instead, and short reads of `system.mutations` wait for it, leaving
 * the engine to other statements in between. On a cluster, `mutations_sync = 2` waits for every
 * replica (a server runs statements side by side, so nothing queues behind it).
 */
export async function deleteBusinessRows(
  clickhouse: ClickHouseClient,
  business: string,
  cluster: string | undefined,
  pause: (ms: number) => Promise<void> = sleep,
): Promise<number> {
  const tables = await businessTables(clickhouse);
  const before = await countBusinessRows(clickhouse, business, tables, cluster);
  const onCluster = cluster && IDENTIFIER.test(cluster) ? ` ON CLUSTER ${cluster}` : '';
  const mergeTrees = tables.filter((t) => t.engine.endsWith('MergeTree'));
  for (const table of mergeTrees) {
    // A mutation, not a lightweight DELETE: those refuse tables with projections and some
    // engines, and leave the rows on disk until a merge; a mutation rewrites them away.
    await clickhouse.command({
      query: `ALTER TABLE ${table.name}${onCluster} DELETE WHERE business = {business:String}`,
      query_params: { business },
      clickhouse_settings: { mutations_sync: onCluster ? '2' : '0' },
    });
  }
  if (!onCluster) await untilMutationsDone(clickhouse, mergeTrees, pause);
  return before;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls until no mutation of these tables is left to run; a failed one throws its reason. */
async function untilMutationsDone(
  clickhouse: ClickHouseClient,
  tables: BusinessTable[],
  pause: (ms: number) => Promise<void>,
): Promise<void> {
  const names = tables.map((table) => table.name);
  for (let wait = 20; ; wait = Math.min(wait * 2, 500)) {
    const result = await clickhouse.query({
      query: `SELECT table, latest_fail_reason AS reason FROM system.mutations
        WHERE database = currentDatabase() AND table IN {names:Array(String)} AND NOT is_done`,
      query_params: { names },
      format: 'JSONEachRow',
    });
    const pending = await result.json<{ table: string; reason: string }>();
    if (pending.length === 0) return;
    const failed = pending.find((mutation) => mutation.reason !== '');
    if (failed) {
      throw new Error(`ClickHouse could not delete from ${failed.table}: ${failed.reason}`);
    }
    await pause(wait);
  }
}

/** Rows of the business left in every table that holds them (through the Distributed tables on a cluster). */
export async function countBusinessRows(
  clickhouse: ClickHouseClient,
  business: string,
  tables?: BusinessTable[],
  cluster?: string,
): Promise<number> {
  const all = tables ?? (await businessTables(clickhouse));
  const readable = all.filter((table) =>
    cluster ? table.engine === 'Distributed' : table.engine.endsWith('MergeTree'),
  );
  let rows = 0;
  for (const table of readable) {
    const result = await clickhouse.query({
      query: `SELECT count() AS n FROM ${table.name} WHERE business = {business:String}`,
      query_params: { business },
      format: 'JSONEachRow',
    });
    const [row] = await result.json<{ n: number | string }>();
    rows += Number(row?.n ?? 0);
  }
  return rows;
}
