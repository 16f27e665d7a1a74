import type { ClickHouseClient } from '@clickhouse/client';
import { NEVER, OPEN, spans } from '../analytics/compile/metric-sources.ts';
import { type RollupName, rollupDef } from '../analytics/sources/rollups.ts';

const PROJECTED = "projected_at <= {cutoff:DateTime64(3, 'UTC')}";
const DAY_MS = 86_400_000;
const QUARTER_HOUR_MS = 900_000;
/** How each slot length the rollups keep starts a slot, in UTC. */
const SLOT_START: Record<number, string> = {
  [DAY_MS]: "toStartOfDay(at, 'UTC')",
  [QUARTER_HOUR_MS]: 'toStartOfFifteenMinutes(at)',
};

/** Facts that can record blocked changes only carry them from the write side onwards. */
export const BLOCKED_UNKNOWN = 'blocked_known = 0';

/** One business's facts of these kinds, projected up to the cutoff. */
const facts = (kinds: string) =>
  `business = {business:String} AND ${PROJECTED} AND kind IN (${kinds})`;

/**
 * The blocked changes of one business's facts worked out from the facts themselves, for facts
 * projected before the write side recorded them (an upgraded installation, `demo`'s generated
 * history). A task is blocked while it is open and at least one of its edges is present to a
 * dependency that is open: the spans in which an edge and its dependency's open state overlap
 * are merged per task (a running count of overlaps), and at each instant where a task's own
 * facts or that count change, the task leaves its old labels (−1) and takes its new ones (+1)
 * if blocked before or after. One pass over the business's facts, however many instants later
 * queries ask about; rows are summed per slot and label set as the rollup's view sums them.
 */
function replaySelect(name: RollupName): string {
  const def = rollupDef(name);
  const slotStart = typeof def.slotMs === 'number' ? SLOT_START[def.slotMs] : undefined;
  if (!slotStart) throw new Error(`${name}: blocked replay knows day and quarter-hour slots only`);
  const labels = def.labels.filter((label) => label !== 'business');
  const nullable = (column: string) => `if(has_fact, argMax(${column}, fact_id), NULL)`;
  const tasks = spans(
    'task_gid',
    `task_gid, fact_id, toUInt8(kind != 'task_deleted' AND status IN ${OPEN}) AS open, ${labels.join(', ')}`,
    facts("'task_created', 'task_updated', 'task_completed', 'task_deleted'"),
  );
  const edges = spans(
    'task_gid, dependency_gid',
    'task_gid, dependency_gid, kind',
    facts("'dependency_added', 'dependency_removed'"),
  );
  const none = labels.map((label) => `'' AS ${label}`).join(', ');
  return `
WITH
  tasks AS (${tasks}),
  edges AS (${edges}),
  blocking AS (
    SELECT e.task_gid AS task_gid, greatest(e.occurred_at, d.occurred_at) AS from_at, least(e.next_at, d.next_at) AS to_at
    FROM edges AS e INNER JOIN tasks AS d ON d.task_gid = e.dependency_gid
    WHERE e.kind = 'dependency_added' AND d.open = 1 AND greatest(e.occurred_at, d.occurred_at) < least(e.next_at, d.next_at)
  ),
  moments AS (
    SELECT task_gid, at, sum(delta) AS delta, max(is_fact) = 1 AS has_fact,
      ${['open', ...labels].map((column) => `${nullable(column)} AS ${column}_n`).join(', ')}
    FROM (
      SELECT task_gid, occurred_at AS at, 0 AS delta, 1 AS is_fact, fact_id, open, ${labels.join(', ')} FROM tasks
      UNION ALL SELECT task_gid, from_at, 1, 0, 0, 0, ${none} FROM blocking
      UNION ALL SELECT task_gid, to_at, -1, 0, 0, 0, ${none} FROM blocking WHERE to_at < ${NEVER}
    )
    GROUP BY task_gid, at
  ),
  states AS (
    SELECT task_gid, at,
      toUInt8(ifNull(anyLast(open_n) OVER w, 0) = 1 AND sum(delta) OVER w > 0) AS blocked,
      ${labels.map((label) => `ifNull(anyLast(${label}_n) OVER w, '') AS ${label}`).join(', ')}
    FROM moments
    WINDOW w AS (PARTITION BY task_gid ORDER BY at ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
  ),
  changes AS (
    SELECT at, ${['blocked', ...labels].map((column) => `${column} AS is_${column}`).join(', ')},
      ${['blocked', ...labels].map((column) => `lagInFrame(${column}) OVER p AS was_${column}`).join(', ')}
    FROM states
    WINDOW p AS (PARTITION BY task_gid ORDER BY at ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)
  )
SELECT {business:String} AS business, ${slotStart} AS slot,
  ${labels.map((label, i) => `tupleElement(tupleElement(side, 2), ${i + 1}) AS ${label}`).join(', ')},
  sum(tupleElement(side, 1)) AS blocked_change
FROM changes
ARRAY JOIN arrayFilter(s -> tupleElement(s, 1) != 0, [
  (-toInt64(was_blocked), (${labels.map((label) => `was_${label}`).join(', ')},)),
  (toInt64(is_blocked), (${labels.map((label) => `is_${label}`).join(', ')},))
]) AS side
GROUP BY slot, ${labels.join(', ')}
HAVING blocked_change != 0`;
}

/**
 * Adds to `name` the blocked changes of every fact projected up to `cutoff`, worked out one
 * business at a time (a business's tasks depend only on its own). The caller has filled the
 * rollup from the same facts with their own blocked changes left out.
 */
export async function replayBlocked(
  clickhouse: ClickHouseClient,
  name: RollupName,
  cutoff: string,
  options: { signal?: AbortSignal; onBusiness?: (facts: number) => void } = {},
): Promise<void> {
  const result = await clickhouse.query({
    query: `SELECT business, count() AS facts FROM facts WHERE ${PROJECTED} GROUP BY business ORDER BY business`,
    query_params: { cutoff },
    format: 'JSONEachRow',
  });
  const businesses = await result.json<{ business: string; facts: number }>();
  const columns = ['slot', ...rollupDef(name).labels, 'blocked_change'].join(', ');
  const query = `INSERT INTO ${name} (${columns}) SELECT ${columns} FROM (${replaySelect(name)})`;
  for (const { business, facts } of businesses) {
    if (options.signal?.aborted) return;
    await clickhouse.command({
      query,
      query_params: { cutoff, business },
      clickhouse_settings: { insert_deduplicate: 0 },
    });
    options.onBusiness?.(Number(facts));
  }
}
