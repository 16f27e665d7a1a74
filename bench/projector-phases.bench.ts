// `npm run bench -- projector-phases [--facts 100000] [--batch 20000] [--rollups 1]`: where a
// projector batch's time goes, phase by phase, on the machine's Postgres and chDB (`--rollups 0`:
// every view dropped). Each phase is the projector's own function, called in the projector's
// order; wall time and this process's CPU (chDB's threads included, Postgres not) per batch.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { toFactRow } from '../libs/projection/fact-rows.ts';
import {
  commitPending,
  loadCheckpoint,
  nextBatchEnd,
  readBatch,
  savePending,
} from '../libs/projection/outbox-reader.ts';
import { dedupToken, insertFacts } from '../libs/projection/projector.ts';
import { migrateClickHouse, openClickHouse } from '../libs/storage/clickhouse.ts';
import { openPostgres } from '../libs/storage/postgres.ts';
import { migratePostgres } from '../libs/storage/postgres-migrations.ts';
import { createScratchDatabase } from '../libs/storage/scratch-database.ts';
import { numberOption } from './options.ts';
import { dropViews, fillOutbox } from './outbox-fill.ts';

const POSTGRES = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export async function run(args: string[]): Promise<void> {
  const facts = numberOption(args, 'facts', 100_000);
  const batchSize = numberOption(args, 'batch', 20_000);
  const rollups = numberOption(args, 'rollups', 1) === 1;
  const database = await createScratchDatabase(POSTGRES, 'cairn_bench');
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-bench-'));
  const pgx = await openPostgres({ url: database.url });
  const ch = await openClickHouse({ dataDir: path.join(dir, 'ch') });
  const wall = new Map<string, number>();
  const cpu = new Map<string, number>();
  const time = async <T>(name: string, fn: () => Promise<T> | T): Promise<T> => {
    const c = process.cpuUsage();
    const t = performance.now();
    const out = await fn();
    wall.set(name, (wall.get(name) ?? 0) + performance.now() - t);
    const u = process.cpuUsage(c);
    cpu.set(name, (cpu.get(name) ?? 0) + (u.user + u.system) / 1000);
    return out;
  };
  try {
    await migratePostgres(pgx.db);
    await migrateClickHouse(ch.client);
    if (!rollups) await dropViews(ch.client);
    await fillOutbox(pgx.db, facts);
    let batches = 0;
    const started = performance.now();
    for (;;) {
      const batch = await time('pg: next end + pending', () =>
        pgx.db.transaction().execute(async (trx) => {
          const checkpoint = await loadCheckpoint(trx, 'facts', true);
          const end = await nextBatchEnd(trx, checkpoint.cursor, batchSize);
          if (!end) return null;
          await savePending(trx, 'facts', end);
          return { from: checkpoint.cursor, to: end };
        }),
      );
      if (!batch) break;
      const outbox = await time('pg: read batch', () => readBatch(pgx.db, batch.from, batch.to));
      const rows = await time('js: toFactRow', () => outbox.map(toFactRow));
      await time('ch: insert', () =>
        insertFacts(ch.client, 'facts', rows, dedupToken('facts', batch.from, batch.to)),
      );
      await time('pg: commit', () => commitPending(pgx.db, 'facts', batch.to, new Date()));
      batches += 1;
    }
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(
      `${facts} facts, ${batches} batches of ${batchSize}, rollups ${rollups}: ${(facts / seconds).toFixed(0)} facts/s\n`,
    );
    for (const [name, ms] of wall) {
      process.stdout.write(
        `${name.padEnd(26)} wall ${(ms / batches).toFixed(1).padStart(8)} ms/batch  cpu(this process) ${((cpu.get(name) ?? 0) / batches).toFixed(1).padStart(8)} ms/batch\n`,
      );
    }
  } finally {
    await ch.close();
    await pgx.close();
    await database.drop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}
