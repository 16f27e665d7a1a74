import fs from 'node:fs/promises';
import path from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { type Kysely, sql } from 'kysely';
import { ERASURE_LEDGER_FILE, readLedger, writeLedger } from '../erasure/erasure-ledger.ts';
import { projectBatch } from '../projection/projector.ts';
import type { Database } from '../storage/database.ts';
import {
  copyOwnerOnlyFile,
  ownerOnlyDir,
  ownerOnlyFile,
  writeOwnerOnlyFile,
} from '../storage/owner-only.ts';
import type { Postgres } from '../storage/postgres.ts';
import {
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  type BackupManifest,
  cairnVersion,
  describeFile,
  KEY_FILES,
  writeManifest,
} from './backup-manifest.ts';
import { holdProjector } from './projector-hold.ts';

export const POSTGRES_FILE = 'postgres.tar.gz';

/** One step of a backup or restore done, of `total`: what a progress bar shows. */
export type LifecycleProgress = (step: { done: number; total: number; what: string }) => void;

export interface BackupInput {
  postgres: Postgres;
  clickhouse: ClickHouseClient;
  /** The data directory (its generated master key goes along). */
  dataDir: string;
  /** Absolute; created, or empty. */
  to: string;
  onProgress?: LifecycleProgress;
  /** How long to wait for a projector batch in flight to finish (default 60 s). */
  settleMs?: number;
}

/**
 * A consistent copy of an embedded installation, taken while it runs, by the process holding it.
 *
 * ClickHouse's facts are the outbox projected up to the checkpoint. The live projector is held
 * (the rebuild's swap hold) and any batch in flight finished, so the checkpoint stands still;
 * ClickHouse's tables are copied, then Postgres at one instant (PGlite's one session held, no
 * transaction open). Both then agree: ClickHouse holds exactly the outbox up to the checkpoint,
 * and what the outbox holds past it is projected after a restore, once. Writes go on throughout.
 */
export async function takeBackup(input: BackupInput): Promise<BackupManifest> {
  const { postgres, clickhouse, to } = input;
  const snapshot = postgres.snapshot;
  if (!snapshot) throw new Error('A backup of this kind needs embedded Postgres (PGlite).');
  await prepareTarget(to);
  const db = postgres.db;
  const tables = await clickhouseTables(clickhouse);
  const total = tables.length + 2;
  let done = 0;
  const step = (what: string) => input.onProgress?.({ done: ++done, total, what });
  input.onProgress?.({ done, total, what: 'holding the projector' });

  const held = await holdProjector(db, {
    settleMs: input.settleMs,
    finishPending: () => projectBatch({ db, clickhouse, batchSize: 1 }),
  });
  try {
    const cursor = held.cursor;
    step('projector held');
    const clickhouseFiles: BackupManifest['clickhouse'] = [];
    for (const table of tables) {
      clickhouseFiles.push(await exportTable(clickhouse, to, table));
      step(`ClickHouse ${table}`);
    }
    const taken = await snapshot(async (session) => {
      await held.verify(session);
      return { at: new Date(), ...(await postgresCounts(session)) };
    });
    await writeOwnerOnlyFile(
      path.join(to, POSTGRES_FILE),
      Buffer.from(await taken.tarball.arrayBuffer()),
    );
    step('Postgres');
    const keys: BackupManifest['keys'] = [];
    for (const file of KEY_FILES) {
      const copied = await copyKey(input.dataDir, to, file);
      if (copied) keys.push(copied);
    }
    const erasures = await readLedger(path.join(input.dataDir, ERASURE_LEDGER_FILE));
    await writeLedger(path.join(to, ERASURE_LEDGER_FILE), erasures);
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      format_version: BACKUP_FORMAT_VERSION,
      cairn_version: await cairnVersion(),
      // The backup's instant: Postgres as copied, ClickHouse as of its checkpoint.
      created_at: taken.read.at.toISOString(),
      checkpoint: { xid: String(cursor.xid), id: Number(cursor.id) },
      postgres: {
        ...(await describeFile(to, POSTGRES_FILE)),
        tasks: taken.read.tasks,
        outbox: taken.read.outbox,
        migrations: taken.read.migrations,
      },
      clickhouse: clickhouseFiles,
      keys,
      erasures: {
        ...(await describeFile(to, ERASURE_LEDGER_FILE)),
        entries: erasures.length,
      },
    };
    await writeManifest(to, manifest);
    return manifest;
  } catch (error) {
    // The directory was empty: whatever is in it now is this unfinished backup's.
    await emptyDirectory(to);
    throw error;
  } finally {
    await held.release();
  }
}

/** Removes everything inside `dir`, keeping `dir` itself. */
async function emptyDirectory(dir: string): Promise<void> {
  for (const entry of await fs.readdir(dir).catch(() => [])) {
    await fs.rm(path.join(dir, entry), { recursive: true, force: true });
  }
}

async function prepareTarget(to: string): Promise<void> {
  if (!path.isAbsolute(to)) throw new Error(`The backup directory must be absolute: ${to}`);
  // A backup holds the data and its keys: the owner's alone (owner-only.ts).
  await ownerOnlyDir(to);
  const entries = await fs.readdir(to);
  if (entries.length > 0) {
    throw new Error(`The backup directory ${to} is not empty; name a new or empty directory.`);
  }
}

async function postgresCounts(db: Kysely<Database>) {
  const row = await sql<{ tasks: string; outbox: string; migrations: string }>`
    select (select count(*) from tasks) as tasks,
           (select count(*) from outbox) as outbox,
           (select count(*) from schema_migrations) as migrations`.execute(db);
  const counts = row.rows[0];
  return {
    tasks: Number(counts?.tasks ?? 0),
    outbox: Number(counts?.outbox ?? 0),
    migrations: Number(counts?.migrations ?? 0),
  };
}

/** Every table holding data (materialized views hold none of their own; they are DDL). */
async function clickhouseTables(clickhouse: ClickHouseClient): Promise<string[]> {
  const result = await clickhouse.query({
    query: `SELECT name FROM system.tables
            WHERE database = currentDatabase() AND engine LIKE '%MergeTree' ORDER BY name`,
    format: 'JSONEachRow',
  });
  return ((await result.json()) as Array<{ name: string }>).map((row) => row.name);
}

/** A table's rows in ClickHouse's Native format, written by the engine itself (chDB in process). */
async function exportTable(
  clickhouse: ClickHouseClient,
  dir: string,
  table: string,
): Promise<BackupManifest['clickhouse'][number]> {
  const file = `clickhouse-${table}.native.zst`;
  const full = path.join(dir, file);
  await clickhouse.command({
    query: `INSERT INTO FUNCTION file({file:String}, 'Native') SELECT * FROM {table:Identifier}`,
    query_params: { file: full, table },
  });
  // An empty table may leave no file at all; an empty file stands for it.
  const bytes = await fs.stat(full).then(
    (stat) => stat.size,
    () => writeOwnerOnlyFile(full, '').then(() => 0),
  );
  // chDB wrote it with this process's umask; a backup does not rely on that.
  await ownerOnlyFile(full);
  if (bytes === 0) return { table, rows: 0, ...(await describeFile(dir, file)) };
  const counted = await clickhouse.query({
    query: `SELECT count() AS n FROM file({file:String}, 'Native')`,
    query_params: { file: full },
    format: 'JSONEachRow',
  });
  const [row] = (await counted.json()) as Array<{ n: number }>;
  return { table, rows: Number(row?.n ?? 0), ...(await describeFile(dir, file)) };
}

async function copyKey(dataDir: string, to: string, file: string) {
  const copied = await copyOwnerOnlyFile(path.join(dataDir, file), path.join(to, file)).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return false;
      throw error;
    },
  );
  return copied ? describeFile(to, file) : undefined;
}
