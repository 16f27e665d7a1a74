import { progressBar } from '../apps/cli/progress-bar.ts';
import type { Cairn } from '../apps/server/cairn.ts';
import { BLOCKED_ROLLUP_NAMES, ROLLUPS } from '../libs/analytics/sources/rollups.ts';
import { generateFacts } from '../libs/demo/fact-generator.ts';
import { backfillRollups } from '../libs/projection/rollup-backfill.ts';

/**
 * Fills a read benchmark's started Cairn with `facts` generated facts, as `demo` does (20
 * businesses, one year), unless its data directory holds them from an earlier run; then waits
 * until every rollup is complete, and merges every table so queries are timed on settled parts.
 */
export async function loadBenchFacts(cairn: Cairn, dataDir: string, facts: number): Promise<void> {
  const ch = cairn.engines.clickhouse.client;
  const count = await ch.query({ query: 'SELECT count() AS n FROM facts', format: 'JSON' });
  const loaded = Number(((await count.json()) as { data: Array<{ n: number }> }).data[0]?.n);
  if (loaded !== facts) {
    if (loaded > 0) throw new Error(`${dataDir} holds ${loaded} facts, not ${facts}`);
    const bar = progressBar(`${facts.toLocaleString('en-US')} facts`, 'facts');
    bar.start(facts, 0);
    await generateFacts(ch, { facts, seed: 1, now: new Date(), onProgress: (n) => bar.update(n) });
    bar.stop();
    // As `demo` does: generated facts carry no blocked changes, so they are worked out.
    const rollupBar = progressBar('blocked rollups', 'facts');
    await backfillRollups({
      db: cairn.engines.postgres.db,
      clickhouse: ch,
      builds: cairn.rollups,
      rollups: BLOCKED_ROLLUP_NAMES,
      onProgress: ({ done, total }) => {
        if (done === 0) rollupBar.start(total, 0);
        rollupBar.update(done);
      },
    });
    rollupBar.stop();
    // Time queries on settled parts, not on tables still merging in the background.
    for (const table of ['facts', ...ROLLUPS.map((r) => r.table)]) {
      await ch.command({ query: `OPTIMIZE TABLE ${table} FINAL` });
    }
  }
  // An installation from before a rollup fills it at start-up: wait until it has, then merge
  // what the backfill wrote, as a load's tables are merged above.
  const filling = ROLLUPS.filter((r) => !cairn.rollups.ready().has(r.table));
  while (cairn.rollups.ready().size < ROLLUPS.length) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  for (const { table } of filling) {
    await ch.command({ query: `OPTIMIZE TABLE ${table} FINAL` });
  }
}
