import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countBusinessRows, deleteBusinessRows } from '../../libs/erasure/erasure-clickhouse.ts';
import { scrubChdbFiles } from '../../libs/erasure/erasure-traces.ts';
import { quickenPartCleanup } from '../../libs/storage/chdb-part-cleanup.ts';
import {
  type ClickHouse,
  migrateClickHouse,
  openClickHouse,
} from '../../libs/storage/clickhouse.ts';
import { loadFacts } from '../support/analytics-load.ts';
import { tempDir } from '../support/engines.ts';
import { filesHolding } from '../support/files-holding.ts';

/**
 * Embedded chDB runs one statement at a time: an erasure's deletion must not hold the engine
 * while it rewrites every part that holds the business, or every other business waits.
 */
describe('erasing a business from embedded ClickHouse', () => {
  let ch: ClickHouse;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await tempDir();
    ch = await openClickHouse({ dataDir: `${dataDir}/ch` });
    await migrateClickHouse(ch.client);
    await quickenPartCleanup(ch.client);
    await loadFacts(ch.client); // 1M facts over biz-0 … biz-3
    // A rollup's rows are summed as its parts merge, so its row count moves on its own: settle
    // every table first, and a count then changes only by what the erasure does.
    const tables = await ch.client.query({
      query: `SELECT name FROM system.tables
        WHERE database = currentDatabase() AND engine LIKE '%MergeTree'`,
      format: 'JSONEachRow',
    });
    for (const { name } of await tables.json<{ name: string }>()) {
      await ch.client.command({ query: `OPTIMIZE TABLE \`${name}\` FINAL` });
    }
  }, 300_000);
  afterAll(() => ch?.close());

  it("answers another business's reads while the deletion runs, and deletes exactly the business", async () => {
    // Rows in facts and every rollup.
    const kept = await countBusinessRows(ch.client, 'biz-0');
    const erased = await countBusinessRows(ch.client, 'biz-1');
    expect(erased).toBeGreaterThan(0);
    const factsOf = async (business: string) => {
      const result = await ch.client.query({
        query: 'SELECT count() AS n FROM facts WHERE business = {business:String}',
        query_params: { business },
        format: 'JSONEachRow',
      });
      return Number((await result.json<{ n: string }>())[0]?.n);
    };
    const keptFacts = await factsOf('biz-0');

    let settled = false;
    const erasing = deleteBusinessRows(ch.client, 'biz-1', undefined).finally(() => {
      settled = true;
    });
    // Each read also says whether a deletion was still running when it ran.
    const during: number[] = [];
    while (!settled) {
      const result = await ch.client.query({
        query: `SELECT count() AS n,
            (SELECT count() FROM system.mutations
              WHERE database = currentDatabase() AND NOT is_done) AS running
          FROM facts WHERE business = 'biz-0'`,
        format: 'JSONEachRow',
      });
      const [row] = await result.json<{ n: number | string; running: number | string }>();
      if (Number(row?.running) > 0) during.push(Number(row?.n));
    }

    expect(await erasing).toBe(erased);
    expect(during.length).toBeGreaterThan(0);
    expect(new Set(during)).toEqual(new Set([keptFacts]));
    expect(await countBusinessRows(ch.client, 'biz-1')).toBe(0);
    expect(await countBusinessRows(ch.client, 'biz-0')).toBe(kept);
    const mutations = await ch.client.query({
      query:
        'SELECT count() AS n FROM system.mutations WHERE database = currentDatabase() AND NOT is_done',
      format: 'JSONEachRow',
    });
    expect(Number((await mutations.json<{ n: string }>())[0]?.n)).toBe(0);
  }, 300_000);

  it('then leaves no file naming the business: neither the parts from before nor the mutation', async () => {
    // What the deletion above left: its command in the mutation files, the old parts beside.
    const dir = `${dataDir}/ch`;
    expect((await filesHolding(dir, 'biz-1')).length).toBeGreaterThan(0);
    const keptFacts = await countBusinessRows(ch.client, 'biz-0');
    await scrubChdbFiles(ch.client, (ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    expect(await filesHolding(dir, 'biz-1')).toEqual([]);
    expect(await countBusinessRows(ch.client, 'biz-0')).toBe(keptFacts);
    // chDB loads what is left without complaint, and the other businesses' rows are all there.
    await ch.close();
    ch = await openClickHouse({ dataDir: dir });
    expect(await countBusinessRows(ch.client, 'biz-0')).toBe(keptFacts);
  }, 300_000);
});
