import { openAsBlob } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { MASTER_KEY_FILE } from '../auth/master-key.ts';
import {
  ERASURE_LEDGER_FILE,
  type ErasureLedgerEntry,
  mergeLedgers,
  readLedger,
  writeLedger,
} from '../erasure/erasure-ledger.ts';
import { loadCheckpoint } from '../projection/outbox-reader.ts';
import { FACTS_CHECKPOINT, releaseLiveProjector } from '../projection/projector.ts';
import { migrateClickHouse, openClickHouse } from '../storage/clickhouse.ts';
import { copyOwnerOnlyFile } from '../storage/owner-only.ts';
import { openPostgres } from '../storage/postgres.ts';
import { migratePostgres } from '../storage/postgres-migrations.ts';
import { ALWAYS_SAVED, type BackupManifest, readManifest } from './backup-manifest.ts';
import type { LifecycleProgress } from './embedded-backup.ts';
import { erasuresAfter, reapplyErasures } from './restore-erasures.ts';
import {
  inspectTarget,
  prepareStaging,
  type RestoreTarget,
  stagingDirFor,
  swapIn,
} from './restore-staging.ts';

export interface RestoreInput {
  /** The backup directory. */
  from: string;
  /** The data directory to fill: missing or empty, or an installation with `replace`. */
  dataDir: string;
  dataPaths: { postgres: string; clickhouse: string };
  /** Restore over the installation in `dataDir`, which is moved aside rather than deleted. */
  replace?: boolean;
  /** Erasure ledgers to honour besides the backup's and the replaced installation's. */
  erasureLedgers?: string[];
  /** The master keys configured (CAIRN_MASTER_KEY, the previous one); the backup's is added. */
  masterKeys?: string[];
  /** Facts per batch, should re-erasing a business finish a projector's batch. */
  batchSize?: number;
  now?: () => Date;
  onProgress?: LifecycleProgress;
}

export interface RestoreResult {
  manifest: BackupManifest;
  /** Businesses erased after the backup was taken, erased again in the restored data. */
  reerased: ErasureLedgerEntry[];
  /** Every erasure the restored installation's ledger knows of. */
  ledger: ErasureLedgerEntry[];
  /** Where the installation that was in `dataDir` now is (`replace`). */
  replacedKeptIn: string | undefined;
}

/**
 * Brings a backup back: PGlite from its tarball, then ClickHouse's tables from their Native
 * files with the materialized views detached (the rollups come back as they were saved, not fed
 * a second time from the facts), each count checked against the manifest; then the erasures the
 * backup does not reflect are applied again. All of it in a staging folder beside `dataDir`,
 * which takes `dataDir`'s place at the end (restore-staging.ts). The projector, once a server
 * starts, resumes at the saved checkpoint: the outbox past it is projected then, exactly once.
 */
export async function restoreBackup(input: RestoreInput): Promise<RestoreResult> {
  const manifest = await readManifest(input.from);
  const target = await inspectTarget(input.dataDir, input.dataPaths);
  refuseTarget(input, target);
  const ledger = mergeLedgers(
    manifest.erasures ? await readLedger(path.join(input.from, manifest.erasures.file)) : [],
    target.kind === 'installation'
      ? await readLedger(path.join(input.dataDir, ERASURE_LEDGER_FILE))
      : [],
    ...(await Promise.all(
      (input.erasureLedgers ?? []).map((file) => readLedger(file, { required: true })),
    )),
  );
  const staging = stagingDirFor(input.dataDir);
  await prepareStaging(staging);
  try {
    const within = (dir: string) => path.join(staging, path.relative(input.dataDir, dir));
    const reerased = await restoreInto(
      {
        ...input,
        dataDir: staging,
        dataPaths: {
          postgres: within(input.dataPaths.postgres),
          clickhouse: within(input.dataPaths.clickhouse),
        },
      },
      manifest,
      erasuresAfter(ledger, manifest.created_at),
    );
    await writeLedger(path.join(staging, ERASURE_LEDGER_FILE), ledger);
    const now = input.now?.() ?? new Date();
    const replacedKeptIn = await swapIn(staging, input.dataDir, target, now);
    return { manifest, reerased, ledger, replacedKeptIn };
  } catch (error) {
    await fs.rm(staging, { recursive: true, force: true });
    throw error;
  }
}

function refuseTarget(input: RestoreInput, target: RestoreTarget): void {
  if (target.kind === 'other') {
    const { entries } = target;
    throw new Error(
      `The data directory ${input.dataDir} is not empty (${entries.slice(0, 3).join(', ')}${entries.length > 3 ? ', …' : ''}). ` +
        'A restore fills an empty one, or replaces an installation (--replace): set DATA_DIR to a new directory, or move this one aside.',
    );
  }
  if (target.kind === 'installation' && !input.replace) {
    throw new Error(
      `The data directory ${input.dataDir} holds an installation. Restore into a new DATA_DIR, or add --replace ` +
        'to put the backup in its place (the installation is moved aside; the businesses its erasure ledger has erased since the backup are erased again).',
    );
  }
}

async function restoreInto(
  input: RestoreInput,
  manifest: BackupManifest,
  due: ErasureLedgerEntry[],
): Promise<ErasureLedgerEntry[]> {
  const total = manifest.clickhouse.length + 3;
  let done = 0;
  const step = (what: string) => input.onProgress?.({ done: ++done, total, what });
  input.onProgress?.({ done, total, what: 'checked the backup' });

  await restorePostgres(input, manifest);
  step('Postgres');

  const ch = await openClickHouse({ dataDir: input.dataPaths.clickhouse });
  try {
    await migrateClickHouse(ch.client);
    await requireTables(ch.client, input.from, manifest);
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

    for (const key of manifest.keys) {
      await copyOwnerOnlyFile(path.join(input.from, key.file), path.join(input.dataDir, key.file));
    }
    step('keys');
    const reerased = due.length > 0 ? await reerase(input, ch.client, due) : [];
    step('erasures');
    return reerased;
  } finally {
    await ch.close();
  }
}

async function restorePostgres(input: RestoreInput, manifest: BackupManifest): Promise<void> {
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
}

/** Postgres opened again beside ClickHouse only when there is something to erase. */
async function reerase(
  input: RestoreInput,
  clickhouse: Client,
  due: ErasureLedgerEntry[],
): Promise<ErasureLedgerEntry[]> {
  const restoredKey = await fs.readFile(path.join(input.dataDir, MASTER_KEY_FILE), 'utf8').then(
    (text) => [text.trim()],
    () => [],
  );
  const pg = await openPostgres({ dataDir: input.dataPaths.postgres });
  try {
    return await reapplyErasures(
      {
        db: pg.db,
        clickhouse,
        cluster: undefined,
        now: input.now ?? (() => new Date()),
        masterKeys: [...(input.masterKeys ?? []), ...restoredKey],
        batchSize: input.batchSize ?? 1_000,
      },
      due,
    );
  } finally {
    await pg.close();
  }
}

/**
 * Every table the backup's version holds must be in it: facts and rollup_builds always, and
 * each rollup its rollup_builds records as complete (one it does not is rebuilt from facts once
 * a server starts, as after an upgrade that adds one). A table this version no longer has is
 * not asked for. Without this, a manifest that left out facts restored "successfully" with the
 * checkpoint past facts nobody would project again.
 */
async function requireTables(
  client: Client,
  from: string,
  manifest: BackupManifest,
): Promise<void> {
  const listed = new Map(manifest.clickhouse.map((saved) => [saved.table, saved]));
  const builds = listed.get('rollup_builds');
  const complete =
    builds && builds.rows > 0
      ? await client
          .query({
            query: `SELECT name FROM file({file:String}, 'Native')
                    GROUP BY name HAVING argMax(complete, completed_at) = 1 ORDER BY name`,
            query_params: { file: path.join(from, builds.file) },
            format: 'JSONEachRow',
          })
          .then((result) => result.json<{ name: string }>())
      : [];
  const here = new Set(await dataTables(client));
  const needed = [...ALWAYS_SAVED, ...complete.map((row) => row.name)].filter((table) =>
    here.has(table),
  );
  const missing = needed.filter((table) => !listed.has(table));
  if (missing.length > 0) {
    throw new Error(
      `The manifest of the backup in ${from} lists no ClickHouse table ${missing.join(', ')}, ` +
        "which the backup's version holds (its rollup_builds records each as complete): refused, nothing was restored.",
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

const materializedViews = (client: Client) => tablesWhere(client, "engine = 'MaterializedView'");
const dataTables = (client: Client) => tablesWhere(client, "engine LIKE '%MergeTree'");

async function tablesWhere(client: Client, engine: string): Promise<string[]> {
  const result = await client.query({
    query: `SELECT name FROM system.tables
            WHERE database = currentDatabase() AND ${engine} ORDER BY name`,
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
      query_params: { table: saved.table, file: path.join(from, saved.file) },
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
