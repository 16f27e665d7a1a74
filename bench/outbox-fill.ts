import type { ClickHouseClient } from '@clickhouse/client';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../libs/storage/database.ts';

/**
 * `facts` task_created facts straight into the outbox, 10,000 a transaction (many
 * transactions, as real writes are), generated in SQL so filling is not what is measured.
 */
export async function fillOutbox(db: Kysely<Database>, facts: number): Promise<void> {
  for (let done = 0; done < facts; done += 10_000) {
    const n = Math.min(10_000, facts - done);
    await sql`
      insert into outbox (kind, business, task_gid, payload, occurred_at)
      select 'task_created', 'biz-' || (i % 20), 'task-' || (${done}::int + i),
             jsonb_build_object('name', 't', 'project', 'p' || (i % 7), 'assignee', 'a' || (i % 13),
               'status', 'open', 'task_created_at', now()),
             now() - (i || ' seconds')::interval
      from generate_series(1, ${n}::int) as i`.execute(db);
  }
}

/** Drops every materialized view: the projector's inserts then feed no rollup. */
export async function dropViews(clickhouse: ClickHouseClient): Promise<void> {
  const result = await clickhouse.query({
    query: `SELECT name FROM system.tables
      WHERE database = currentDatabase() AND engine = 'MaterializedView'`,
    format: 'JSONEachRow',
  });
  for (const { name } of await result.json<{ name: string }>()) {
    await clickhouse.command({ query: `DROP VIEW ${name}` });
  }
}
