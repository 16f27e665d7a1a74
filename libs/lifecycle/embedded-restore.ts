import { openAsBlob } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { loadCheckpoint } from '../projection/outbox-reader.ts';
import { FACTS_CHECKPOINT, releaseLiveProjector } from '../projection/projector.ts';
import { migrateClickHouse, openClickHouse } from '../storage/clickhouse.ts';
import { openPostgres } from '../storage/postgres.ts';
import { migratePostgres } from '../storage/postgres-migrations.ts';
import { type BackupManifest, readManifest } from './backup-manifest.ts';
import { emptyDirectory, type LifecycleProgress } from './embedded-backup.ts';

export interface RestoreInput {
  /** The backup directory. */
  from: string;
  /** The data directory to fill; missing or empty. */
  dataDir: string;
  dataPaths: { postgres: string; clickhouse: string };
  onProgress?: LifecycleProgress;
}

/**
 * Brings a backup back into an empty data directory: PGlite from its tarball, then ClickHouse's
 * tables from their Native files with the materialized views detached (the rollups come back
 * as they were saved, not fed a second time from the facts). Each count is checked against the
 * manifest. The projector, once a server starts, resumes at the saved checkpoint: the outbox
 * past it is projected then, exactly once.
 */
export async function restoreBackup(input: RestoreInput): Promise<BackupManifest> {
  await requireEmpty(input.dataDir);
  const manifest = await readManifest(input.from);
  try {
    await restoreInto(input, manifest);
    return manifest;
  } catch (error) {
    // It was empty: a half-restored directory must not pass for an installation.
    await emptyDirectory(input.dataDir);
    throw error;
  }
}

async function restoreInto(input: RestoreInput, manifest: BackupManifest): Promise<void> {
  const total = manifest.clickhouse.length + 2;
  let done = 0;
  const step = (what: string) => input.onProgress?.({ done: ++done, total, what });
  input.onProgress?.({ done, total, what: 'checked the backup' });

  await fs.mkdir(input.dataDir, { recursive: true });
  const tarball = await openAsBlob(path.join(input.from, manifest.postgres.file));
  const pg = await openPostgres({ dataDir: input.dataPaths.postgres, loadDataDir: tarball });
  try {
    const counts = await sql<{ tasks: string; outbox: string }>`
      select (select count(*) from tasks) as tasks,
             (select count(*) from outbox) as outbox`.execute(pg.db);
    const found = counts.rows[0];
    const checkpoint = await loadCheckpoint(pg.db, FACTS_CHECKPOINT);
    expectSame('Postgres tasks', Number(found?.tasks), manifest.postgres.tasks);
    expectSame('Postgres outbox facts', Number(found?.outbox), manifest.postgres.outbox);
    if (
      String(checkpoint.cursor.xid) !== manifest.checkpoint.xid ||
      Number(checkpoint.cursor.id) !== manifest.checkpoint.id
    ) {
      throw new Error('The restored projector checkpoint differs from the manifest.');
    }
    // The backup held the projector; the copy must not.
    await releaseLiveProjector(pg.db);
    await migratePostgres(pg.db);
  } finally {
    await pg.close();
  }
  step('Postgres');

  const ch = await openClickHouse({ dataDir: input.dataPaths.clickhouse });
  try {
    await migrateClickHouse(ch.client);
    const views = await materializedViews(ch.client);
    for (const view of views) {
      await ch.client.command({
        query: 'DETACH TABLE {view:Identifier}',
        query_params: { view },
      });
    }
    try {
      for (const saved of manifest.clickhouse) {
        await loadTable(ch.client, input.from, saved);
        step(`ClickHouse ${saved.table}`);
      }
    } finally {
      for (const view of views) {
        await ch.client.command({
          query: 'ATTACH TABLE {view:Identifier}',
          query_params: { view },
        });
      }
    }
  } finally {
    await ch.close();
  }

  for (const key of manifest.keys) {
    const target = path.join(input.dataDir, key.file);
    await fs.copyFile(path.join(input.from, key.file), target);
    await fs.chmod(target, 0o600);
  }
}

async function requireEmpty(dataDir: string): Promise<void> {
  const entries = await fs.readdir(dataDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  if (entries.length > 0) {
    throw new Error(
      `The data directory ${dataDir} is not empty (${entries.slice(0, 3).join(', ')}${entries.length > 3 ? ', …' : ''}). ` +
        'A restore fills an empty one only: set DATA_DIR to a new directory, or move this one aside.',
    );
  }
}

function expectSame(what: string, found: number, expected: number): void {
  if (found !== expected) {
    throw new Error(`Restored ${what}: ${found}, but the backup's manifest says ${expected}.`);
  }
}

const ONE_BLOCK_AT_A_TIME = {
  max_threads: 1,
  max_insert_threads: '1',
  max_block_size: '65536',
  min_insert_block_size_rows: '65536',
  min_insert_block_size_bytes: '16777216',
} as const;

type Client = Awaited<ReturnType<typeof openClickHouse>>['client'];

async function materializedViews(client: Client): Promise<string[]> {
  const result = await client.query({
    query: `SELECT name FROM system.tables
            WHERE database = currentDatabase() AND engine = 'MaterializedView' ORDER BY name`,
    format: 'JSONEachRow',
  });
  return ((await result.json()) as Array<{ name: string }>).map((row) => row.name);
}

async function loadTable(
  client: Client,
  from: string,
  saved: BackupManifest['clickhouse'][number],
): Promise<void> {
  const engine = await client.query({
    query:
      'SELECT engine FROM system.tables WHERE database = currentDatabase() AND name = {table:String}',
    query_params: { table: saved.table },
    format: 'JSONEachRow',
  });
  const [table] = (await engine.json()) as Array<{ engine: string }>;
  // A table this version's migrations no longer create (a rebuild's leftover) is not restored.
  if (!table) return;
  if (saved.rows > 0) {
    await client.command({
      query: `INSERT INTO {table:Identifier} SELECT * FROM file({file:String}, 'Native')`,
      clickhouse_settings: {
        // Every row once, as saved: identical blocks of a rollup must not be taken for a retry.
        insert_deduplicate: 0,
        // Small blocks, one at a time: a rollup's aggregate states are large, and a restore
        // should not need several times the memory the installation runs in.
        ...ONE_BLOCK_AT_A_TIME,
      },
      query_params: { table: saved.table, file: path.resolve(from, saved.file) },
    });
  }
  // Aggregating and replacing tables may merge rows as soon as they land; plain ones keep each.
  if (table.engine !== 'MergeTree') return;
  const counted = await client.query({
    query: 'SELECT count() AS n FROM {table:Identifier}',
    query_params: { table: saved.table },
    format: 'JSONEachRow',
  });
  const [found] = (await counted.json()) as Array<{ n: number }>;
  expectSame(`ClickHouse ${saved.table} rows`, Number(found?.n ?? 0), saved.rows);
}
