import fs from 'node:fs/promises';
import path from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { quickenPartCleanup } from '../storage/chdb-part-cleanup.ts';

/** Longest the erasure waits for chDB to remove the parts its deletion replaced. */
const OLD_PARTS_WAIT_MS = 60_000;
const MUTATION_FILE = /^mutation_\d+\.txt$/;

interface TablePaths {
  name: string;
  data_paths: string[];
}

/**
 * What chDB keeps on disk of a finished deletion, under DATA_DIR/ch: the parts as they were
 * before it (outdated, removed by the table's cleanup thread once no query reads them) and each
 * finished mutation's `mutation_<n>.txt` beside the table's parts, whose command names the
 * business in full. Waits for the first to go and removes the second; a ClickHouse server keeps
 * its own (docs/operations.md). Tables are those holding a `business` column.
 */
export async function scrubChdbFiles(
  clickhouse: ClickHouseClient,
  pause: (ms: number) => Promise<void>,
): Promise<void> {
  const tables = await mergeTreeTables(clickhouse);
  if (tables.length === 0) return;
  const names = tables.map((table) => table.name);
  // Tables made since start-up (a rebuild's) wake their cleanup thread as often as the others.
  await quickenPartCleanup(clickhouse, names);
  await untilOutdatedPartsGone(clickhouse, names, pause);
  const done = await (
    await clickhouse.query({
      query: `SELECT table, mutation_id FROM system.mutations
        WHERE database = currentDatabase() AND table IN {names:Array(String)} AND is_done`,
      query_params: { names },
      format: 'JSONEachRow',
    })
  ).json<{ table: string; mutation_id: string }>();
  for (const { table, mutation_id } of done) {
    // A name the engine gave, checked before it becomes a path.
    if (!MUTATION_FILE.test(mutation_id)) continue;
    for (const dir of tables.find((candidate) => candidate.name === table)?.data_paths ?? []) {
      await fs.rm(path.join(dir, mutation_id), { force: true });
    }
  }
}

async function mergeTreeTables(clickhouse: ClickHouseClient): Promise<TablePaths[]> {
  const result = await clickhouse.query({
    query: `SELECT name, data_paths FROM system.tables
      WHERE database = currentDatabase() AND engine LIKE '%MergeTree'
        AND name IN (SELECT table FROM system.columns
          WHERE database = currentDatabase() AND name = 'business')
      ORDER BY name`,
    format: 'JSONEachRow',
  });
  return result.json<TablePaths>();
}

/**
 * Waits until the parts outdated now are gone from disk (parts outdated later, by merges of new
 * inserts, are not waited for). Past OLD_PARTS_WAIT_MS (a long query still reading them) it
 * throws: the step is tried again.
 */
async function untilOutdatedPartsGone(
  clickhouse: ClickHouseClient,
  names: string[],
  pause: (ms: number) => Promise<void>,
): Promise<void> {
  const outdated = async () =>
    (
      await (
        await clickhouse.query({
          query: `SELECT concat(table, '/', name) AS part FROM system.parts
            WHERE database = currentDatabase() AND table IN {names:Array(String)} AND NOT active`,
          query_params: { names },
          format: 'JSONEachRow',
        })
      ).json<{ part: string }>()
    ).map((row) => row.part);
  const waiting = new Set(await outdated());
  const deadline = Date.now() + OLD_PARTS_WAIT_MS;
  for (let wait = 50; waiting.size > 0; wait = Math.min(wait * 2, 1_000)) {
    if (Date.now() > deadline) {
      throw new Error(
        `ClickHouse still keeps ${waiting.size} parts from before the deletion; the erasure retries`,
      );
    }
    await pause(wait);
    const still = new Set(await outdated());
    for (const part of waiting) if (!still.has(part)) waiting.delete(part);
  }
}
