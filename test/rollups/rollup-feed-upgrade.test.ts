// An installation whose rollups were fed by several views each (main, times, live): the upgrade
// leaves one view per rollup writing what they wrote together, and the rollups filled again
// hold every fact once, facts inserted while the views were swapped included.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROLLUP_NAMES } from '../../libs/analytics/sources/rollups.ts';
import { generateFacts } from '../../libs/demo/fact-generator.ts';
import { backfillRollups } from '../../libs/projection/rollup-backfill.ts';
import { RollupBuilds, rollupsNeedingBackfill } from '../../libs/projection/rollup-builds.ts';
import {
  CLICKHOUSE_MIGRATIONS_DIR,
  migrateClickHouse,
  openClickHouse,
} from '../../libs/storage/clickhouse.ts';
import { tempDir, useMigratedPostgres } from '../support/engines.ts';
import { expectRollupsMatchFacts } from '../support/projection-invariants.ts';

const NOW = new Date(Date.now() + 3_600_000);
/** The first migration of the folded views: the schema before it is the older installation's. */
const FIRST_FOLDED = '0059';

/** The schema files of the older installation. */
async function olderSchema(): Promise<string> {
  const dir = await tempDir('cairn-pre-feed-');
  for (const file of await fs.readdir(CLICKHOUSE_MIGRATIONS_DIR)) {
    if (/^\d{4}_/.test(file) && file < FIRST_FOLDED) {
      await fs.copyFile(path.join(CLICKHOUSE_MIGRATIONS_DIR, file), path.join(dir, file));
    }
  }
  return dir;
}

describe('rollups fed by several views each, upgraded to one view a rollup', () => {
  const scratch = useMigratedPostgres();

  it('write what the old views wrote, and are filled again to hold every fact once', {
    timeout: 300_000,
  }, async () => {
    const ch = await openClickHouse({ dataDir: `${await tempDir()}/ch` });
    try {
      await migrateClickHouse(ch.client, await olderSchema());
      const views = async () => {
        const result = await ch.client.query({
          query: `SELECT name FROM system.tables
            WHERE database = currentDatabase() AND engine = 'MaterializedView' ORDER BY name`,
          format: 'JSONEachRow',
        });
        return (await result.json<{ name: string }>()).map((row) => row.name);
      };
      expect(await views()).toHaveLength(16);
      // Complete from the start, as the older version recorded them beside empty facts.
      await ch.client.insert({
        table: 'rollup_builds',
        values: ROLLUP_NAMES.map((name) => ({ name, complete: 1, holds: 1 })),
        format: 'JSONEachRow',
      });
      await generateFacts(ch.client, { facts: 5_000, seed: 21, businesses: 3, now: NOW });

      // Facts keep arriving while the views are swapped.
      const during = generateFacts(ch.client, {
        facts: 3_000,
        seed: 22,
        businesses: 2,
        now: NOW,
        batchSize: 100,
      });
      await migrateClickHouse(ch.client);
      await during;
      expect(await views()).toEqual(ROLLUP_NAMES.map((name) => `${name}_feed_mv`).sort());

      const builds = await new RollupBuilds(ch.client, 50).start();
      expect([...builds.ready()]).toEqual([]);
      expect(await rollupsNeedingBackfill(builds)).toEqual(ROLLUP_NAMES);
      await backfillRollups({ db: scratch.pg.db, clickhouse: ch.client, builds });
      expect([...builds.ready()].sort()).toEqual([...ROLLUP_NAMES].sort());
      await expectRollupsMatchFacts(ch.client);

      // And the one view a rollup keeps them so as facts arrive.
      await generateFacts(ch.client, { facts: 2_000, seed: 23, businesses: 2, now: NOW });
      await expectRollupsMatchFacts(ch.client);
      await builds.close();
    } finally {
      await ch.close();
    }
  });

  it('write, in one view a rollup, what the old views wrote between them', {
    timeout: 300_000,
  }, async () => {
    const ch = await openClickHouse({ dataDir: `${await tempDir()}/ch` });
    try {
      await migrateClickHouse(ch.client, await olderSchema());
      await generateFacts(ch.client, { facts: 6_000, seed: 31, businesses: 3, now: NOW });
      await migrateClickHouse(ch.client);
      // Nothing inserted since: the rollups hold what the old views wrote, each compared with
      // what the one view now in place makes of the same facts, every column.
      await expectRollupsMatchFacts(ch.client);
    } finally {
      await ch.close();
    }
  });
});
