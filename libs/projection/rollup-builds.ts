import type { ClickHouseClient } from '@clickhouse/client';
import { ROLLUP_NAMES, type RollupName } from '../analytics/sources/rollups.ts';

/**
 * What a complete build holds: raised when a build recorded before must be filled again rather
 * than read. 1: the rollups gained `live_change`. 2: each rollup's views became one (0059–0080);
 * a fact inserted while an upgrade swapped them may have reached the rollup twice.
 */
export const ROLLUP_HOLDS = 2;

/**
 * Which rollups hold every fact, as recorded in `rollup_builds` (latest row per rollup wins).
 * Queries read the set from memory; it is re-read in the background, so an API process learns
 * within `refreshMs` that another process finished (or started) a backfill.
 */
export class RollupBuilds {
  private complete = new Set<RollupName>();
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> = Promise.resolve();

  readonly clickhouse: ClickHouseClient;
  readonly refreshMs: number;
  constructor(clickhouse: ClickHouseClient, refreshMs = 1_000) {
    this.clickhouse = clickhouse;
    this.refreshMs = refreshMs;
  }

  /** Reads the set now, then keeps it current until `close()`. */
  async start(): Promise<this> {
    await this.refresh();
    this.timer = setInterval(() => {
      this.refreshing = this.refresh().catch(() => {
        // An unreachable engine fails the queries themselves; the set keeps its last value.
      });
    }, this.refreshMs);
    this.timer.unref();
    return this;
  }

  ready(): ReadonlySet<RollupName> {
    return this.complete;
  }

  async refresh(): Promise<void> {
    const result = await this.clickhouse.query({
      query: `SELECT name FROM rollup_builds GROUP BY name
        HAVING argMax(complete, completed_at) = 1 AND argMax(holds, completed_at) >= {holds:UInt32}`,
      query_params: { holds: ROLLUP_HOLDS },
      format: 'JSONEachRow',
    });
    const rows = await result.json<{ name: string }>();
    this.complete = new Set(
      rows.map((row) => row.name).filter((name): name is RollupName => isRollup(name)),
    );
  }

  /** Records rollups as complete (`true`) or being rebuilt (`false`), and applies it here at once. */
  async mark(names: readonly RollupName[], complete: boolean): Promise<void> {
    if (names.length === 0) return;
    await this.clickhouse.insert({
      table: 'rollup_builds',
      values: names.map((name) => ({ name, complete: complete ? 1 : 0, holds: ROLLUP_HOLDS })),
      format: 'JSONEachRow',
    });
    const next = new Set(this.complete);
    for (const name of names) {
      if (complete) next.add(name);
      else next.delete(name);
    }
    this.complete = next;
  }

  /** Stops re-reading; resolves once no read is in flight (the engine may then be closed). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.refreshing;
  }
}

const isRollup = (name: string): name is RollupName => (ROLLUP_NAMES as string[]).includes(name);

/**
 * Rollups start complete where facts are empty: from then on every insert into facts reaches
 * them through their views. Those not complete over existing facts need a backfill.
 */
export async function rollupsNeedingBackfill(builds: RollupBuilds): Promise<RollupName[]> {
  const missing = ROLLUP_NAMES.filter((name) => !builds.ready().has(name));
  if (missing.length === 0) return [];
  const result = await builds.clickhouse.query({
    query: 'SELECT count() AS n FROM (SELECT 1 FROM facts LIMIT 1)',
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ n: number }>();
  if (Number(row?.n ?? 0) > 0) return missing;
  await builds.mark(missing, true);
  return [];
}
