// An installation whose rollups were complete before they kept the changes of the tasks not
// deleted (live_change): after the upgrade none counts as complete, so queries read facts until
// the rollups are filled again, and then tasks_in_status answers from them as from facts.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { QueryRequest } from '../../libs/analytics/parse/query-parser.ts';
import { runQuery } from '../../libs/analytics/query.service.ts';
import { ROLLUP_NAMES, type SourceName } from '../../libs/analytics/sources/rollups.ts';
import { generateFacts } from '../../libs/demo/fact-generator.ts';
import { backfillRollups } from '../../libs/projection/rollup-backfill.ts';
import { RollupBuilds, rollupsNeedingBackfill } from '../../libs/projection/rollup-builds.ts';
import {
  CLICKHOUSE_MIGRATIONS_DIR,
  migrateClickHouse,
  openClickHouse,
} from '../../libs/storage/clickhouse.ts';
import { analyticsDeps } from '../support/analytics.ts';
import { tempDir, useMigratedPostgres } from '../support/engines.ts';
import { expectRollupsMatchFacts } from '../support/projection-invariants.ts';

const NOW = new Date(Date.now() + 3_600_000);
/** The first migration of the live changes: the schema before it is the older installation's. */
const FIRST_LIVE = '0046';

describe('rollups built before they kept live changes', () => {
  const scratch = useMigratedPostgres();

  it('are filled again after the upgrade, and answer tasks_in_status as facts do', {
    timeout: 180_000,
  }, async () => {
    const before = await tempDir('cairn-pre-live-');
    for (const file of await fs.readdir(CLICKHOUSE_MIGRATIONS_DIR)) {
      if (/^\d{4}_/.test(file) && file < FIRST_LIVE) {
        await fs.copyFile(path.join(CLICKHOUSE_MIGRATIONS_DIR, file), path.join(before, file));
      }
    }
    const ch = await openClickHouse({ dataDir: `${await tempDir()}/ch` });
    try {
      await migrateClickHouse(ch.client, before);
      // Complete from the start, as the older version recorded them beside empty facts.
      await ch.client.insert({
        table: 'rollup_builds',
        values: ROLLUP_NAMES.map((name) => ({ name, complete: 1 })),
        format: 'JSONEachRow',
      });
      await generateFacts(ch.client, { facts: 5_000, seed: 11, businesses: 3, now: NOW });

      await migrateClickHouse(ch.client);
      const builds = await new RollupBuilds(ch.client, 50).start();
      expect([...builds.ready()]).toEqual([]);
      expect(await rollupsNeedingBackfill(builds)).toEqual(ROLLUP_NAMES);
      const deps = {
        ...analyticsDeps({ clickhouse: ch, postgres: scratch.pg }, { now: () => NOW }),
        rollups: () => builds.ready(),
      };
      const request = {
        metrics: ['tasks_in_status', 'open_tasks'],
        dimensions: ['status'],
        period: 'this_year',
      } as QueryRequest;
      const ask = (source?: SourceName) =>
        runQuery(deps, request, {
          signal: new AbortController().signal,
          businesses: null,
          ...(source ? { source } : {}),
        });
      expect((await ask()).metadata.source).toBe('facts');

      await backfillRollups({ db: scratch.pg.db, clickhouse: ch.client, builds });
      expect([...builds.ready()].sort()).toEqual([...ROLLUP_NAMES].sort());
      await expectRollupsMatchFacts(ch.client);
      const after = await ask();
      expect(after.metadata.source).toMatch(/^rollup_/);
      const onFacts = await ask('facts');
      const byStatus = (rows: Record<string, unknown>[]) =>
        [...rows].sort((a, b) => String(a.status).localeCompare(String(b.status)));
      // Closed tasks count too: the demo's history completes some.
      expect(byStatus(after.data).map((row) => row.status)).toContain('completed');
      expect(byStatus(after.data)).toEqual(byStatus(onFacts.data));
      await builds.close();
    } finally {
      await ch.close();
    }
  });
});
