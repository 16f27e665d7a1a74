import type { ClickHouseClient } from '@clickhouse/client';

/**
 * How often an embedded table's cleanup thread wakes. chDB removes the parts a merge or a
 * mutation replaced (it keeps none for `old_parts_lifetime`) only when that thread wakes: every
 * 30–40 s by the MergeTree defaults, backing off to 5 min on a quiet table, so the rows an
 * erasure deleted stayed on disk that long. Waking every 1–5 s costs a glance at the table.
 * A ClickHouse server keeps its own settings (docs/operations.md).
 */
export const CHDB_CLEANUP_SETTINGS = {
  cleanup_delay_period: 1,
  max_cleanup_delay_period: 5,
  cleanup_delay_period_random_add: 0,
} as const;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SET_ALREADY = `max_cleanup_delay_period = ${CHDB_CLEANUP_SETTINGS.max_cleanup_delay_period}`;

/**
 * Gives the MergeTree tables of the current database (`only`: those of them) the embedded
 * cleanup settings, where they lack them. A setting changed here is taken up when the table's
 * cleanup thread next wakes; a table opened with it wakes that often from the start.
 */
export async function quickenPartCleanup(
  clickhouse: ClickHouseClient,
  only?: readonly string[],
): Promise<void> {
  const tables = await (
    await clickhouse.query({
      query: `SELECT name, create_table_query AS ddl FROM system.tables
        WHERE database = currentDatabase() AND engine LIKE '%MergeTree'`,
      format: 'JSONEachRow',
    })
  ).json<{ name: string; ddl: string }>();
  const settings = Object.entries(CHDB_CLEANUP_SETTINGS)
    .map(([name, value]) => `${name} = ${value}`)
    .join(', ');
  for (const { name, ddl } of tables) {
    if (!IDENTIFIER.test(name) || ddl.includes(SET_ALREADY)) continue;
    if (only && !only.includes(name)) continue;
    await clickhouse.command({ query: `ALTER TABLE ${name} MODIFY SETTING ${settings}` });
  }
}
