// `npm run bench -- projector [--facts 200000] [--batch 20000] [--rounds 2] [--seconds 20] [--rate 1000]`
// on the machine's Postgres and Redis (TEST_POSTGRES_URL / TEST_REDIS_URL override), chDB as
// ClickHouse. 1) Throughput: a pre-filled outbox drained into ClickHouse, facts/s, in turns
// with the rollups' views in place (as shipped) and dropped, to show what the rollups cost;
// also per second of CPU (this process and its Postgres backends), which a busy neighbour on a
// shared machine moves far less than the wall-clock rate.
// 2) Freshness: a steady stream of task writes through the write use case (transaction, outbox,
// wake-up; in process, because HTTP on a small box saturates below the rate), while a prober
// writes one task at a time over HTTP and polls POST /api/v1/query until it counts it:
// commit → visible in /query, p50/p99.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startCairn } from '../apps/server/cairn.ts';
import { issueToken } from '../libs/auth/token.service.ts';
import { loadConfig } from '../libs/config/config.ts';
import { drainOutbox } from '../libs/projection/projector.ts';
import { wakeProjector } from '../libs/projection/projector-jobs.ts';
import { migrateClickHouse, openClickHouse } from '../libs/storage/clickhouse.ts';
import { openPostgres } from '../libs/storage/postgres.ts';
import { migratePostgres } from '../libs/storage/postgres-migrations.ts';
import { createScratchDatabase } from '../libs/storage/scratch-database.ts';
import { createTask } from '../libs/tasks/task.service.ts';
import { inTaskUnit } from '../libs/tasks/task-unit.ts';
import { cpuUsed } from './cpu-used.ts';
import { numberOption } from './options.ts';
import { dropViews, fillOutbox } from './outbox-fill.ts';
import { lingerFromEnvironment } from './projector-linger.ts';

const POSTGRES = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

async function throughput(
  facts: number,
  batchSize: number,
  rollups: boolean,
): Promise<{ rate: number; cpuRate: number }> {
  const database = await createScratchDatabase(POSTGRES, 'cairn_bench');
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-bench-'));
  const pgx = await openPostgres({ url: database.url });
  const ch = await openClickHouse({ dataDir: path.join(dir, 'ch') });
  try {
    await migratePostgres(pgx.db);
    await migrateClickHouse(ch.client);
    if (!rollups) await dropViews(ch.client);
    await fillOutbox(pgx.db, facts);
    const started = performance.now();
    const used = await cpuUsed(pgx.db, () =>
      drainOutbox({ db: pgx.db, clickhouse: ch.client, batchSize }),
    );
    const projected = used.result;
    const seconds = (performance.now() - started) / 1000;
    const rate = Math.round(projected / seconds);
    const cpu = used.process + used.postgres;
    const perThousand = (s: number) => ((s * 1e6) / projected).toFixed(1);
    process.stdout.write(
      `throughput ${rollups ? 'with rollups   ' : 'without rollups'}: ${projected} facts in ${seconds.toFixed(2)} s = ${rate} facts/s (batch ${batchSize}); ` +
        `CPU ${perThousand(cpu)} ms per 1,000 facts (this process ${perThousand(used.process)}, Postgres ${perThousand(used.postgres)}) = ${Math.round(projected / cpu)} facts per CPU second\n`,
    );
    return { rate, cpuRate: projected / cpu };
  } finally {
    await ch.close();
    await pgx.close();
    await database.drop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

async function freshness(seconds: number, rate: number): Promise<void> {
  const database = await createScratchDatabase(POSTGRES, 'cairn_bench');
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-bench-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATABASE_URL: database.url,
    REDIS_URL: REDIS,
    CAIRN_REDIS_PREFIX: `cairn_bench_${randomBytes(4).toString('hex')}`,
    ...lingerFromEnvironment(),
  });
  const cairn = await startCairn({ config, rateLimits: { service_account: 1e9, user: 1e9 } });
  try {
    const { token } = await issueToken(
      cairn.engines.postgres.db,
      {
        name: 'bench',
        scopes: ['workflows:write', 'analytics:read'],
        businesses: ['load', 'probe'],
        kind: 'service_account',
      },
      new Date(),
    );
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const post = (route: string, body: unknown) =>
      fetch(`${cairn.url}${route}`, { method: 'POST', headers, body: JSON.stringify(body) });

    const tasks = {
      db: cairn.engines.postgres.db,
      now: () => new Date(),
      wakeProjector: wakeProjector(cairn.engines.queue),
    };
    let running = true;
    let writes = 0;
    let writeErrors = 0;
    let skipped = 0;
    const load = (async () => {
      // Paced in 10 ms ticks so the rate stays steady rather than bursty; a write that would
      // exceed 500 in flight is skipped and counted, so an overloaded box shows in the figures.
      const inFlight = new Set<Promise<void>>();
      const started = performance.now();
      for (let tick = 0; running; tick++) {
        const due =
          Math.floor(((tick + 1) * 10 * rate) / 1000) - Math.floor((tick * 10 * rate) / 1000);
        for (let i = 0; i < due; i++) {
          if (inFlight.size >= 500) {
            skipped += 1;
            continue;
          }
          const write = inTaskUnit(tasks, (trx) =>
            createTask(trx, { business: 'load', name: 'w', project: 'p' }, tasks.now()),
          ).then(
            () => {
              writes += 1;
            },
            () => {
              writeErrors += 1;
            },
          );
          inFlight.add(write);
          void write.finally(() => inFlight.delete(write));
        }
        await sleep(Math.max(0, started + (tick + 1) * 10 - performance.now()));
      }
      await Promise.all(inFlight);
    })();

    const latencies: number[] = [];
    const cpuBefore = process.cpuUsage();
    const began = performance.now();
    for (let probe = 1; performance.now() - began < seconds * 1000; probe++) {
      const res = await post('/api/v1/tasks', { business: 'probe', name: `p${probe}` });
      await res.arrayBuffer();
      const committed = performance.now();
      for (;;) {
        const answer = await post('/api/v1/query', {
          metrics: ['tasks_created'],
          business: 'probe',
          period: 'today',
        });
        const body = (await answer.json()) as { data?: Array<{ tasks_created?: number }> };
        if ((body.data?.[0]?.tasks_created ?? 0) >= probe) break;
        await sleep(5);
      }
      latencies.push(performance.now() - committed);
      await sleep(50);
    }
    const elapsed = (performance.now() - began) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    running = false;
    await load;
    latencies.sort((a, b) => a - b);
    process.stdout.write(
      `freshness: ${latencies.length} probes at ${Math.round(writes / elapsed)} writes/s achieved ` +
        `(target ${rate}, ${writeErrors} errors, ${skipped} skipped): p50 ${percentile(latencies, 50).toFixed(0)} ms, ` +
        `p99 ${percentile(latencies, 99).toFixed(0)} ms, max ${latencies.at(-1)?.toFixed(0)} ms; ` +
        `this process (writes, projector, chDB) ${(((cpu.user + cpu.system) / 1e6 / elapsed) * 100).toFixed(0)} % CPU, ` +
        `projector linger ${config.projectorLingerMs} ms\n`,
    );
  } finally {
    await cairn.close();
    await database.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

export async function run(args: string[]): Promise<void> {
  process.stdout.write(
    `projector benchmark on ${os.cpus().length} CPUs, Node ${process.version}\n`,
  );
  const facts = numberOption(args, 'facts', 200_000);
  const batch = numberOption(args, 'batch', 20_000);
  const rates = { with: [] as number[], without: [] as number[] };
  const cpuRates = { with: [] as number[], without: [] as number[] };
  for (let round = 0; round < numberOption(args, 'rounds', 2); round++) {
    for (const rollups of [false, true]) {
      const { rate, cpuRate } = await throughput(facts, batch, rollups);
      rates[rollups ? 'with' : 'without'].push(rate);
      cpuRates[rollups ? 'with' : 'without'].push(cpuRate);
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? 0;
  const ratio = (of: { with: number[]; without: number[] }) =>
    (median(of.with) / median(of.without)).toFixed(2);
  process.stdout.write(
    `throughput median: ${median(rates.with)} facts/s with rollups, ${median(rates.without)} without (ratio ${ratio(rates)}); ` +
      `per CPU second ${Math.round(median(cpuRates.with))} with, ${Math.round(median(cpuRates.without))} without (ratio ${ratio(cpuRates)})\n`,
  );
  await freshness(numberOption(args, 'seconds', 20), numberOption(args, 'rate', 1_000));
}
