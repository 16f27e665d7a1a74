import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runQuery } from '../../libs/analytics/query.service.ts';
import { ROLLUP_NAMES } from '../../libs/analytics/sources/rollups.ts';
import { generateFacts } from '../../libs/demo/fact-generator.ts';
import { drainOutbox } from '../../libs/projection/projector.ts';
import { backfillRollups } from '../../libs/projection/rollup-backfill.ts';
import { RollupBuilds, rollupsNeedingBackfill } from '../../libs/projection/rollup-builds.ts';
import {
  CLICKHOUSE_MIGRATIONS_DIR,
  type ClickHouse,
  migrateClickHouse,
  openClickHouse,
} from '../../libs/storage/clickhouse.ts';
import { appendFacts } from '../../libs/tasks/outbox.repository.ts';
import { analyticsDeps } from '../support/analytics.ts';
import { migratedPglite, tempDir, useMigratedPostgres } from '../support/engines.ts';
import {
  expectRollupsMatchFacts,
  factFor,
  rollupsVersusFacts,
} from '../support/projection-invariants.ts';

const run = promisify(execFile);
// After every fact written here (they carry the real time): state "now" is read after them.
const NOW = new Date(Date.now() + 3_600_000);

/** ClickHouse as an installation from before rollups left it: facts only. */
async function openPreRollupClickHouse(dataDir: string): Promise<ClickHouse> {
  const before = await tempDir('cairn-old-schema-');
  const files = [
    '0001_facts.sql',
    '0002_previous_state.sql',
    '0003_due_on_date32.sql',
    // demo's facts name their creation's labels on completions (as the projector's now do).
    '0015_facts_creation_labels.sql',
    // …and their work and blocked times.
    '0023_facts_completion_times.sql',
  ];
  for (const file of files) {
    await fs.copyFile(path.join(CLICKHOUSE_MIGRATIONS_DIR, file), path.join(before, file));
  }
  const ch = await openClickHouse({ dataDir });
  await migrateClickHouse(ch.client, before);
  return ch;
}

describe('rollups kept exactly once with facts', () => {
  const scratch = useMigratedPostgres();

  it('drops a retried insert from the rollups only with deduplicate_blocks_in_dependent_materialized_views', async () => {
    const ch = await openClickHouse({ dataDir: `${await tempDir()}/ch` });
    try {
      await migrateClickHouse(ch.client);
      const insertTwice = async (token: string, dependent: 0 | 1) => {
        const row = {
          fact_id: dependent + 1,
          kind: 'task_created',
          business: `dedup${dependent}`,
          task_gid: `t${dependent}`,
          occurred_at: '2026-11-01T10:00:00.000Z',
          project: 'p',
          assignee: 'a',
          status: 'open',
          previous_status: '',
          task_created_at: '2026-11-01T10:00:00.000Z',
        };
        for (let i = 0; i < 2; i++) {
          await ch.client.insert({
            table: 'facts',
            values: [row],
            format: 'JSONEachRow',
            clickhouse_settings: {
              insert_deduplication_token: token,
              deduplicate_blocks_in_dependent_materialized_views: dependent,
            },
          });
        }
      };
      await insertTwice('without', 0);
      await insertTwice('with', 1);
      const result = await ch.client.query({
        query: `SELECT business, (SELECT count() FROM facts WHERE business = r.business) AS facts,
          sum(created) AS created FROM rollup_business_day AS r GROUP BY business ORDER BY business`,
        format: 'JSONEachRow',
      });
      // facts drops the repeat either way; the rollup only with the setting (on in BASE_SETTINGS).
      expect(await result.json()).toEqual([
        { business: 'dedup0', facts: 1, created: 2 },
        { business: 'dedup1', facts: 1, created: 1 },
      ]);
    } finally {
      await ch.close();
    }
  });

  it('fills rollups over an older installation while the projector keeps writing, and answers from facts until then', {
    timeout: 300_000,
  }, async () => {
    const ch = await openPreRollupClickHouse(`${await tempDir()}/ch`);
    try {
      // Facts from before the upgrade: generated straight into ClickHouse and projected ones.
      await generateFacts(ch.client, { facts: 4_000, seed: 3, businesses: 4, now: NOW });
      for (let i = 0; i < 40; i++)
        await appendFacts(scratch.pg.db, [factFor(`up${i % 2}`, `u${i}`)]);
      const project = { db: scratch.pg.db, clickhouse: ch.client, batchSize: 7 };
      await drainOutbox(project);

      await migrateClickHouse(ch.client);
      const builds = await new RollupBuilds(ch.client, 50).start();
      expect(await rollupsNeedingBackfill(builds)).toEqual(ROLLUP_NAMES);
      const deps = {
        ...analyticsDeps({ clickhouse: ch, postgres: scratch.pg }, { now: () => NOW }),
        rollups: () => builds.ready(),
      };
      const ask = () =>
        runQuery(
          deps,
          {
            metrics: ['tasks_created', 'open_tasks'],
            dimensions: ['business'],
            period: 'this_year',
          },
          { signal: new AbortController().signal, businesses: null },
        );
      const before = await ask();
      expect(before.metadata.source).toBe('facts');

      // Writes keep arriving through the projector while the backfill runs.
      let writing = true;
      const writer = (async () => {
        for (let i = 0; writing; i++) {
          await appendFacts(scratch.pg.db, [factFor(`up${i % 2}`, `during${i}`)]);
          await drainOutbox(project);
          // A steady trickle, not a flood: the engine runs one statement at a time, and the
          // backfill's own batches must get their turns on a busy machine too.
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      const progress: number[] = [];
      const { facts } = await backfillRollups({
        db: scratch.pg.db,
        clickhouse: ch.client,
        builds,
        onProgress: ({ done }) => progress.push(done),
      });
      writing = false;
      await writer;
      await drainOutbox(project);

      expect(facts).toBeGreaterThanOrEqual(4_040);
      expect(progress.length).toBeGreaterThan(2);
      expect([...builds.ready()].sort()).toEqual([...ROLLUP_NAMES].sort());
      await expectRollupsMatchFacts(ch.client);
      const after = await ask();
      expect(after.metadata.source).toMatch(/^rollup_/);
      const onFacts = await runQuery(
        deps,
        { metrics: ['tasks_created', 'open_tasks'], dimensions: ['business'], period: 'this_year' },
        { signal: new AbortController().signal, businesses: null, source: 'facts' },
      );
      expect(after.data).toEqual(onFacts.data);
      await builds.close();
    } finally {
      await ch.close();
    }
  });

  it('npm run cli -- projector backfill-rollups fills them with a progress bar', {
    timeout: 180_000,
  }, async () => {
    const dataDir = await tempDir();
    const ch = await openPreRollupClickHouse(`${dataDir}/ch`);
    await generateFacts(ch.client, { facts: 5_000, seed: 4, businesses: 2, now: NOW });
    await ch.close();
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', path.resolve('apps/cli/main.ts'), 'projector', 'backfill-rollups'],
      {
        env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: scratch.url, LOG_LEVEL: 'silent' },
      },
    );
    expect(stdout).toMatch(/Backfilled rollups from 5000 facts in [\d.]+ s/);
    expect(stderr).toContain('rollups [');
    const after = await openClickHouse({ dataDir: `${dataDir}/ch` });
    try {
      await expectRollupsMatchFacts(after.client);
      const builds = await new RollupBuilds(after.client).start();
      await builds.close();
      expect([...builds.ready()].sort()).toEqual([...ROLLUP_NAMES].sort());
      expect(Object.keys(await rollupsVersusFacts(after.client)).sort()).toEqual(
        [...ROLLUP_NAMES].sort(),
      );
    } finally {
      await after.close();
    }
  });

  it('npm run cli -- demo keeps the rollups complete as it loads facts straight into ClickHouse', {
    timeout: 180_000,
  }, async () => {
    const dataDir = await tempDir();
    await migratedPglite(`${dataDir}/pg`);
    await run(
      process.execPath,
      ['--import', 'tsx', path.resolve('apps/cli/main.ts'), 'demo', '--facts', '3000'],
      { env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' } },
    );
    const ch = await openClickHouse({ dataDir: `${dataDir}/ch` });
    try {
      await expectRollupsMatchFacts(ch.client);
      const builds = await new RollupBuilds(ch.client).start();
      await builds.close();
      expect([...builds.ready()].sort()).toEqual([...ROLLUP_NAMES].sort());
    } finally {
      await ch.close();
    }
  });
});
