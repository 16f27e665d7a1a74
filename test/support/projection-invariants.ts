import type { ClickHouseClient } from '@clickhouse/client';
import { sql } from 'kysely';
import { expect } from 'vitest';
import { ROLLUPS } from '../../libs/analytics/sources/rollups.ts';
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
  // One statement, so the totals and the per-kind counts see the same facts while the
  // projector inserts (a fact id belongs to one business and kind, so the sums are exact).
  const chResult = await ch.query({
    query: `SELECT business, kind, count() AS n, uniqExact(fact_id) AS d FROM facts GROUP BY business, kind`,
    format: 'JSONEachRow',
  });
  const chRows = await chResult.json<{ business: string; kind: string; n: number; d: number }>();
  const facts = {
    rows: chRows.reduce((sum, row) => sum + Number(row.n), 0),
    distinct: chRows.reduce((sum, row) => sum + Number(row.d), 0),
  };
  const byKey = (rows: Array<{ business: string; kind: string; n: unknown }>) =>
    Object.fromEntries(rows.map((r) => [`${r.business}/${r.kind}`, Number(r.n)]));
  const postgres = byKey(pgRows.rows);
  return {
    outbox: Object.values(postgres).reduce((a, b) => a + b, 0),
    rows: facts.rows,
    distinct: facts.distinct,
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

/**
 * Each rollup as it is, and as its view's own SELECT computes it over the facts now in
 * ClickHouse, both reduced to one row per key: a lost, doubled or stray fact shows as a
 * difference. Cycle-time sums are compared in whole milliseconds: each cycle is a whole number
 * of them (DateTime64(3) instants), so the total is exact whatever the order of addition, where
 * hours rounded to a decimal place flip on values that sit on the rounding boundary.
 * Blocked changes are compared too, unless some fact predates them: the backfill then works
 * them out from the facts (blocked-replay.ts), which the blocked-rollup test checks by answers.
 * The changes of the tasks not deleted (`live_change`) and the completions' work and blocked
 * times (where the rollup keeps them) follow each rollup's rows, reduced on their own.
 */
export async function rollupsVersusFacts(
  ch: ClickHouseClient,
): Promise<Record<string, { rollup: unknown[]; facts: unknown[] }>> {
  const out: Record<string, { rollup: unknown[]; facts: unknown[] }> = {};
  const unknownResult = await ch.query({
    query: 'SELECT count() AS n FROM facts WHERE blocked_known = 0',
    format: 'JSONEachRow',
  });
  const [unknown] = await unknownResult.json<{ n: number }>();
  const blockedKnown = Number(unknown?.n ?? 0) === 0;
  for (const rollup of ROLLUPS) {
    const view = await viewSelect(ch, `${rollup.table}_feed_mv`);
    const times = await hasColumn(ch, rollup.table, 'started');
    const labels = rollup.labels.filter((l) => l !== 'business');
    const keys = ['business', 'second', ...labels].join(', ');
    const completions = 'completions' in rollup && rollup.completions;
    const blocked = blockedKnown && 'blocked' in rollup && rollup.blocked;
    const reduce = (
      source: string,
      // The view yields DateTime64 slots, the table DateTime: compare them as seconds.
    ) => `SELECT ${['business', 'toUnixTimestamp(slot) AS second', ...labels].join(', ')},
        sum(facts) AS n_facts, sum(created) AS n_created,
        sum(completed) AS n_completed, sum(cancelled) AS n_cancelled,
        sum(dependencies_added) AS added, sum(dependencies_removed) AS removed,
        toInt64(round(sum(cycle_hours_sum) * 3600000)) AS cycle_ms, quantileExactInclusiveMerge(0.5)(cycle_hours) AS p50,
        uniqExactMerge(assignees) AS n_assignees, sum(open_change) AS open, sumMap(due_change) AS due
        ${completions ? ', sumMap(completed_by) AS done' : ''}
        ${blocked ? ', sum(blocked_change) AS n_blocked' : ''}
      FROM ${source} GROUP BY ${keys}
      HAVING n_facts != 0 OR open != 0 OR notEmpty(due.1) ${completions ? 'OR notEmpty(done.1)' : ''}
        ${blocked ? 'OR n_blocked != 0' : ''}
      ORDER BY ${keys}`;
    const read = async (source: string) =>
      (await ch.query({ query: reduce(source), format: 'JSONEachRow' })).json();
    const extra = async (source: string) =>
      (
        await ch.query({
          query: `SELECT ${['business', 'toUnixTimestamp(slot) AS second', ...labels].join(', ')},
            sum(live_change) AS live
            ${
              times
                ? `, sum(started) AS n_started, toInt64(round(sum(work_hours_sum) * 3600000)) AS work_ms,
                  quantileExactInclusiveMerge(0.5)(work_hours) AS work_p50, sum(timed) AS n_timed,
                  sum(blocked_ms_sum) AS blocked_ms, sum(timed_cycle_ms_sum) AS timed_cycle_ms`
                : ''
            }
            FROM ${source} GROUP BY ${keys}
            HAVING live != 0 ${times ? 'OR n_started != 0 OR n_timed != 0' : ''}
            ORDER BY ${keys}`,
          format: 'JSONEachRow',
        })
      ).json();
    out[rollup.table] = {
      rollup: [...(await read(rollup.table)), ...(await extra(rollup.table))],
      facts: [...(await read(`(${view})`)), ...(await extra(`(${view})`))],
    };
  }
  return out;
}

async function hasColumn(ch: ClickHouseClient, table: string, column: string): Promise<boolean> {
  const result = await ch.query({
    query: `SELECT count() AS n FROM system.columns
      WHERE database = currentDatabase() AND table = {table:String} AND name = {column:String}`,
    query_params: { table, column },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ n: number }>();
  return Number(row?.n ?? 0) > 0;
}

/** The SELECT of a materialized view, as ClickHouse keeps it. */
async function viewSelect(ch: ClickHouseClient, name: string): Promise<string> {
  const result = await ch.query({
    query:
      'SELECT as_select FROM system.tables WHERE database = currentDatabase() AND name = {name:String}',
    query_params: { name },
    format: 'JSONEachRow',
  });
  const [view] = await result.json<{ as_select: string }>();
  if (!view) throw new Error(`no view ${name}`);
  return view.as_select;
}

/** Every rollup holds exactly what its view makes of the facts (and holds something). */
export async function expectRollupsMatchFacts(ch: ClickHouseClient): Promise<void> {
  for (const [table, { rollup, facts }] of Object.entries(await rollupsVersusFacts(ch))) {
    expect(facts.length, table).toBeGreaterThan(0);
    expect(rollup, table).toEqual(facts);
  }
}
