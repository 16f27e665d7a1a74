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
 * cluster the replicated `_local` tables, ON CLUSTER) and waits for the deletions: `mutations_sync
 * = 2` returns once every replica has applied the mutation. Returns the rows there were.
 */
export async function deleteBusinessRows(
  clickhouse: ClickHouseClient,
  business: string,
  cluster: string | undefined,
): Promise<number> {
  const tables = await businessTables(clickhouse);
  const before = await countBusinessRows(clickhouse, business, tables, cluster);
  const onCluster = cluster && IDENTIFIER.test(cluster) ? ` ON CLUSTER ${cluster}` : '';
  for (const table of tables.filter((t) => t.engine.endsWith('MergeTree'))) {
    // A mutation, not a lightweight DELETE: those refuse tables with projections and some
    // engines; a mutation works on every MergeTree, and the business's rows are few parts' worth.
    await clickhouse.command({
      query: `ALTER TABLE ${table.name}${onCluster} DELETE WHERE business = {business:String}`,
      query_params: { business },
      clickhouse_settings: { mutations_sync: '2' },
    });
  }
  return before;
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
