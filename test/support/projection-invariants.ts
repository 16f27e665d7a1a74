import type { ClickHouseClient } from '@clickhouse/client';
import { sql } from 'kysely';
import type { Db } from '../../libs/storage/database.ts';
import type { Fact } from '../../libs/tasks/outbox.repository.ts';

export interface ProjectionTotals {
  outbox: number;
  rows: number;
  distinct: number;
  /** `business/kind` → facts, on each side. */
  postgres: Record<string, number>;
  clickhouse: Record<string, number>;
}

/** What each side holds, counted independently: the exactly-once invariant compares these. */
export async function projectionTotals(db: Db, ch: ClickHouseClient): Promise<ProjectionTotals> {
  const pgRows = await sql<{ business: string; kind: string; n: string }>`
    select business, kind, count(*) as n from outbox group by business, kind`.execute(db);
  const chResult = await ch.query({
    query: `SELECT business, kind, count() AS n FROM facts GROUP BY business, kind`,
    format: 'JSONEachRow',
  });
  const chRows = await chResult.json<{ business: string; kind: string; n: number }>();
  const totals = await ch.query({
    query: 'SELECT count() AS rows, uniqExact(fact_id) AS distinct FROM facts',
    format: 'JSONEachRow',
  });
  const [facts] = await totals.json<{ rows: number; distinct: number }>();
  const byKey = (rows: Array<{ business: string; kind: string; n: unknown }>) =>
    Object.fromEntries(rows.map((r) => [`${r.business}/${r.kind}`, Number(r.n)]));
  const postgres = byKey(pgRows.rows);
  return {
    outbox: Object.values(postgres).reduce((a, b) => a + b, 0),
    rows: Number(facts?.rows ?? 0),
    distinct: Number(facts?.distinct ?? 0),
    postgres,
    clickhouse: byKey(chRows),
  };
}

export const factFor = (business: string, gid: string, at = new Date()): Fact => ({
  kind: 'task_created',
  business,
  task_gid: gid,
  occurred_at: at,
  payload: {
    name: gid,
    project: 'faults',
    assignee: null,
    status: 'open',
    previous_status: null,
    due_on: null,
    task_created_at: at.toISOString(),
  },
});
