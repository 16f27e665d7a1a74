// `npm run bench -- retention [--backlog 200000] [--seconds 10] [--writers 8] [--facts 100000] [--rounds 3]`
// on the machine's Postgres (TEST_POSTGRES_URL overrides), chDB as ClickHouse. Whether outbox
// retention slows writes or the projector: the same run with retention off and with it at its
// most aggressive (CAIRN_OUTBOX_RETENTION_DAYS=0), side by side. Each turn starts from a fresh
// database holding `backlog` projected facts, which retention (when on) removes while
// 1) `writers` concurrent task writes (the write use case: task row and outbox fact in one
//    transaction) run flat out for `seconds`, the projector following them, and then
// 2) `facts` facts written in one go are drained by the projector as fast as it can.
// The two turns alternate for `rounds` rounds (a busy machine drifts), each printed, then medians.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { countUnprojected, loadCheckpoint } from '../libs/projection/outbox-reader.ts';
import { readRetention, startOutboxRetention } from '../libs/projection/outbox-retention.ts';
import { drainOutbox, FACTS_CHECKPOINT, type ProjectorDeps } from '../libs/projection/projector.ts';
import { migrateClickHouse, openClickHouse } from '../libs/storage/clickhouse.ts';
import { openPostgres } from '../libs/storage/postgres.ts';
import { migratePostgres } from '../libs/storage/postgres-migrations.ts';
import { createScratchDatabase } from '../libs/storage/scratch-database.ts';
import { createTask } from '../libs/tasks/task.service.ts';
import { inTaskUnit } from '../libs/tasks/task-unit.ts';
import { numberOption } from './options.ts';
import { fillOutbox } from './outbox-fill.ts';
import { percentile } from './percentile.ts';

const POSTGRES = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const BATCH = 20_000;

interface Figures {
  writesPerSecond: number;
  writeP99Ms: number;
  followedPerSecond: number;
  projectedPerSecond: number;
  removed: number;
  outboxLeft: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Drains until nothing is left past the cursor. On a shared Postgres server another database's
 * open transaction holds the snapshot's xmin back, and facts are not ready until it ends.
 */
async function drainAll(projector: ProjectorDeps): Promise<number> {
  let projected = 0;
  for (;;) {
    projected += await drainOutbox(projector);
    const checkpoint = await loadCheckpoint(projector.db, FACTS_CHECKPOINT);
    if ((await countUnprojected(projector.db, checkpoint.cursor)) === 0) return projected;
    await sleep(5);
  }
}

async function turn(
  retention: boolean,
  options: { backlog: number; seconds: number; writers: number; facts: number },
): Promise<Figures> {
  const database = await createScratchDatabase(POSTGRES, 'cairn_bench');
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-bench-'));
  const pg = await openPostgres({ url: database.url });
  const ch = await openClickHouse({ dataDir: path.join(dir, 'ch') });
  const db = pg.db;
  const projector = { db, clickhouse: ch.client, batchSize: BATCH };
  try {
    await migratePostgres(db);
    await migrateClickHouse(ch.client);
    await fillOutbox(db, options.backlog);
    await drainAll(projector);
    await sql`vacuum analyze outbox`.execute(db);

    const pruning = retention
      ? startOutboxRetention({ db, days: 0, batchSize: 1_000, intervalMs: 1_000 })
      : undefined;

    // 1) Writes, with the projector following them.
    let running = true;
    let followed = 0;
    const follower = (async () => {
      while (running) {
        const n = await drainOutbox(projector);
        followed += n;
        if (n === 0) await sleep(20);
      }
    })();
    const tasks = { db, now: () => new Date(), wakeProjector: () => {} };
    const latencies: number[] = [];
    const began = performance.now();
    const deadline = began + options.seconds * 1000;
    await Promise.all(
      Array.from({ length: options.writers }, async () => {
        while (performance.now() < deadline) {
          const started = performance.now();
          await inTaskUnit(tasks, (trx) =>
            createTask(trx, { business: 'load', name: 'w', project: 'p' }, tasks.now()),
          );
          latencies.push(performance.now() - started);
        }
      }),
    );
    const writeSeconds = (performance.now() - began) / 1000;
    running = false;
    await follower;
    followed += await drainAll(projector);

    // 2) The projector flat out over a fresh backlog.
    await fillOutbox(db, options.facts);
    const drainStarted = performance.now();
    const projected = await drainAll(projector);
    const drainSeconds = (performance.now() - drainStarted) / 1000;

    await pruning?.stop();
    const left = await sql<{ n: string }>`select count(*) as n from outbox`.execute(db);
    return {
      writesPerSecond: latencies.length / writeSeconds,
      writeP99Ms: percentile(latencies, 0.99),
      followedPerSecond: followed / writeSeconds,
      projectedPerSecond: projected / drainSeconds,
      removed: (await readRetention(db)).removed,
      outboxLeft: Number(left.rows[0]?.n ?? 0),
    };
  } finally {
    await ch.close();
    await pg.close();
    await database.drop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

export async function run(args: string[]): Promise<void> {
  const options = {
    backlog: numberOption(args, 'backlog', 200_000),
    seconds: numberOption(args, 'seconds', 10),
    writers: numberOption(args, 'writers', 8),
    facts: numberOption(args, 'facts', 100_000),
  };
  const rounds = numberOption(args, 'rounds', 3);
  process.stdout.write(
    `retention benchmark on ${os.cpus().length} CPUs, Node ${process.version}: ` +
      `${options.backlog} projected facts to remove, ${options.writers} writers for ${options.seconds} s, ` +
      `then ${options.facts} facts drained; ${rounds} rounds, off and on in turns\n`,
  );
  const off: Figures[] = [];
  const on: Figures[] = [];
  for (let round = 0; round < rounds; round++) {
    off.push(await turn(false, options));
    on.push(await turn(true, options));
  }
  const median = (figures: Figures[], pick: (f: Figures) => number) =>
    [...figures.map(pick)].sort((a, b) => a - b)[figures.length >> 1] ?? Number.NaN;
  const rows: Array<[string, (f: Figures) => number, number]> = [
    ['task writes/s', (f) => f.writesPerSecond, 0],
    ['write p99 (ms)', (f) => f.writeP99Ms, 1],
    ['projector, following (facts/s)', (f) => f.followedPerSecond, 0],
    ['projector, flat out (facts/s)', (f) => f.projectedPerSecond, 0],
    ['facts removed from the outbox', (f) => f.removed, 0],
    ['facts left in the outbox', (f) => f.outboxLeft, 0],
  ];
  const cell = (figures: Figures[], pick: (f: Figures) => number, digits: number) =>
    `${figures.map((f) => pick(f).toFixed(digits)).join(' ')} → ${median(figures, pick).toFixed(digits)}`;
  process.stdout.write(
    `${'(each round → median)'.padEnd(32)}${'retention off'.padStart(28)}${'retention 0 days'.padStart(30)}\n`,
  );
  for (const [label, pick, digits] of rows) {
    process.stdout.write(
      `${label.padEnd(32)}${cell(off, pick, digits).padStart(28)}${cell(on, pick, digits).padStart(30)}\n`,
    );
  }
}
