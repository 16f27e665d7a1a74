// `npm run bench -- dependents [--dependents 100000] [--seconds 5]
// [--only pages|create|search|walk] [--tasks 1000000] [--nodes 100000] [--cpu-profile DIR]` on the
// machine's Postgres (TEST_POSTGRES_URL overrides). A task with 100,000 dependents: first and
// middle pages at limit=100, concurrency 8 and 32, through HTTP (autocannon) against the same
// statements sent straight to Postgres with pg (the ceiling). Then task creation (with its
// outbox fact) against the raw insert transaction. Then name search (`q`) over 1,000,000 more
// tasks and a transitive page (`depth=all`) over a 100,000-node graph (bench/search-walk.ts),
// each against its own compiled statements sent raw. The server runs in a child process so load
// and service do not share an event loop; `--cpu-profile` writes its V8 profile to DIR. Each
// figure also prints where the CPU went (service, load generator, Postgres): on a small box
// they share the cores.

import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import pg from 'pg';
import { startCairn } from '../apps/server/cairn.ts';
import { issueToken } from '../libs/auth/token.service.ts';
import { loadConfig, POSTGRES_DEFAULTS } from '../libs/config/config.ts';
import { readProjection } from '../libs/projection/projection-freshness.ts';
import type { Db } from '../libs/storage/database.ts';
import { openPostgres } from '../libs/storage/postgres.ts';
import { migratePostgres } from '../libs/storage/postgres-migrations.ts';
import { createScratchDatabase } from '../libs/storage/scratch-database.ts';
import { resolveCursorKey } from '../libs/tasks/cursor-key.ts';
import { edgePageStatement } from '../libs/tasks/dependency.repository.ts';
import { encodeCursor } from '../libs/tasks/keyset-cursor.ts';
import type { Target } from './bench-target.ts';
import { formatSplit, startCpuSplit } from './cpu-split.ts';
import { seedHub } from './hub-seed.ts';
import { numberOption } from './options.ts';
import { lingerFromEnvironment } from './projector-linger.ts';
import { rawQuery, rawRate } from './raw-rate.ts';
import { searchFigures, walkFigures } from './search-walk.ts';
import { serveChild } from './serve-child.ts';
import { sharedSecret } from './shared-secret.ts';
import { sideBySide } from './side-by-side.ts';

const POSTGRES = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const CURSOR_SECRET = sharedSecret('CAIRN_BENCH_CURSOR_SECRET');

/** The bench token's businesses, as the service binds them for every page. */
const TOKEN_BUSINESSES = ['bench', 'search'];

export async function run(args: string[]): Promise<void> {
  if (args[0] === '--serve') return serve(args[1]!, args[2]!);
  const count = numberOption(args, 'dependents', 100_000);
  const seconds = numberOption(args, 'seconds', 5);
  const database = await createScratchDatabase(POSTGRES, 'cairn_bench');
  const url = new URL(database.url);
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-bench-'));
  // Set-up statements (a million rows, index builds) run far past a request's time limit.
  const db = await openPostgres({
    url: url.toString(),
    timeouts: { ...POSTGRES_DEFAULTS.timeouts, statementMs: 30 * 60_000 },
  });
  let child: ChildProcess | undefined;
  let pool: pg.Pool | undefined;
  try {
    await migratePostgres(db.db);
    await seedHub(db.db, count);
    await sql`analyze`.execute(db.db);
    // Flush the set-up's dirty pages now, or a checkpoint lands on the measured writes later.
    await sql`checkpoint`.execute(db.db);
    const middleId = (
      await sql<{ id: number }>`select id from task_dependencies where dependency_gid = 'root'
        order by id offset ${Math.floor(count / 2)} limit 1`.execute(db.db)
    ).rows[0]!.id;
    const key = await resolveCursorKey({
      configured: CURSOR_SECRET,
      masterKey: undefined,
      db: db.db,
    });
    const middle = encodeCursor(key, { listing: 'dependents', taskGid: 'root', afterId: middleId });
    const { token } = await issueToken(
      db.db,
      {
        name: 'bench',
        scopes: ['workflows:read', 'workflows:write'],
        businesses: TOKEN_BUSINESSES,
        kind: 'service_account',
      },
      new Date(),
    );
    const profileAt = args.indexOf('--cpu-profile');
    const started = await startChild(
      url.toString(),
      dataDir,
      profileAt >= 0 ? args[profileAt + 1] : undefined,
    );
    child = started.child;
    const headers = { authorization: `Bearer ${token}` };
    pool = new pg.Pool({ connectionString: url.toString(), max: 10 });
    // A cold server spends its first seconds compiling hot paths; measure it warm.
    await autocannon({
      url: `${started.url}/api/v1/tasks/root/dependents?limit=100`,
      connections: 8,
      duration: 2,
      headers,
    });
    const onlyAt = args.indexOf('--only');
    const only = onlyAt >= 0 ? args[onlyAt + 1] : undefined;
    const target = { url: started.url, pid: child.pid, headers, pool, seconds };
    console.log(`dependents of one task: ${count}; ${seconds} s per figure; limit=100`);
    const runs = (part: string) => only === undefined || only === part;
    if (runs('pages')) await pageFigures(target, db.db, middleId, middle);
    if (runs('create')) await creationFigures(target, db.db);
    if (runs('search')) await searchFigures(target, db.db, numberOption(args, 'tasks', 1_000_000));
    if (runs('walk')) await walkFigures(target, db.db, key, numberOption(args, 'nodes', 100_000));
  } finally {
    await pool?.end();
    // The server's data directory is removed below: wait until it has closed its engines.
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await db.close();
    await database.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

/** First and middle pages through the service, each beside the same statement sent raw. */
async function pageFigures(
  target: Target,
  db: Db,
  middleId: number,
  middle: string,
): Promise<void> {
  console.log(
    'page   conc  service req/s  p50 ms  p99 ms  raw pg req/s  p50 ms  p99 ms  ratio  raw prepared  ratio',
  );
  for (const [label, after] of [
    ['first', 0],
    ['middle', middleId],
  ] as const) {
    const query = label === 'first' ? '' : `&offset=${encodeURIComponent(middle)}`;
    for (const connections of [8, 32]) {
      await sideBySide(
        target,
        label,
        connections,
        `/api/v1/tasks/root/dependents?limit=100${query}`,
        // The service's own statement for a page without opt_fields, compiled as it compiles it.
        [
          edgePageStatement('dependents', 'root', {
            afterId: after,
            limit: 101,
            columns: [],
            businesses: TOKEN_BUSINESSES,
          }).compile(db),
        ],
        6,
      );
    }
  }
}

/** Task creation (task row and its outbox fact) against the raw insert transaction. */
async function creationFigures(target: Target, db: Db): Promise<void> {
  const createCpu = startCpuSplit(target.pid);
  const create = await autocannon({
    url: `${target.url}/api/v1/tasks`,
    method: 'POST',
    connections: 32,
    duration: target.seconds,
    headers: { ...target.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ business: 'bench', name: 'created by the benchmark', project: 'p' }),
  });
  if (create.non2xx > 0) throw new Error(`${create.non2xx} non-2xx answers`);
  const createSplit = createCpu();
  // The service's projector is still carrying those facts to ClickHouse: let it finish, then
  // hold the service still, or its projector would carry the raw run's facts too, taking CPU
  // from the raw run and flattering the ratio.
  const caughtUp = await projectorCaughtUp(db);
  if (target.pid !== undefined) process.kill(target.pid, 'SIGSTOP');
  const insertCpu = startCpuSplit(undefined);
  let n = 0;
  let raw: Awaited<ReturnType<typeof rawRate>>;
  try {
    raw = await rawRate(target.pool, 32, target.seconds, async (client) => {
      const gid = `raw-${process.pid}-${n++}`;
      await rawQuery(client, 'begin');
      await rawQuery(
        client,
        `insert into tasks (gid, business, name, project, status, created_at, updated_at,
           created_project, created_status)
         values ($1, 'bench', 'raw', 'p', 'open', now(), now(), 'p', 'open')`,
        [gid],
      );
      await rawQuery(
        client,
        `insert into outbox (kind, business, task_gid, payload, occurred_at)
         values ('task_created', 'bench', $1, $2, now())`,
        [gid, JSON.stringify({ name: 'raw', status: 'open' })],
      );
      await rawQuery(client, 'commit');
    });
  } finally {
    if (target.pid !== undefined) process.kill(target.pid, 'SIGCONT');
  }
  console.log(
    `task creation, conc 32: service ${create.requests.average.toFixed(0)} req/s (p50 ${create.latency.p50} ms, p99 ${create.latency.p99} ms); raw insert transaction ${raw.rate.toFixed(0)} tx/s (p50 ${raw.p50.toFixed(1)} ms, p99 ${raw.p99.toFixed(1)} ms); ratio ${(create.requests.average / raw.rate).toFixed(2)}\n  service: ${formatSplit(createSplit)}; raw: ${formatSplit(insertCpu())}; the projector caught up ${(caughtUp / 1000).toFixed(1)} s after the service run, and the service was stopped during the raw run`,
  );
}

/** Waits until every outbox fact is past the projector's checkpoint; resolves with the wait. */
async function projectorCaughtUp(db: Db): Promise<number> {
  const started = performance.now();
  while ((await readProjection(db)).oldest !== null) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return performance.now() - started;
}

function startChild(databaseUrl: string, dataDir: string, profileDir?: string) {
  return serveChild(
    'dependents',
    [databaseUrl, dataDir],
    profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  );
}

/** The child: one Cairn (api + projector, chDB), rate limits out of the way. */
async function serve(databaseUrl: string, dataDir: string): Promise<void> {
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'silent',
    CAIRN_CURSOR_SECRET: CURSOR_SECRET,
    ...lingerFromEnvironment(),
  });
  const cairn = await startCairn({
    config,
    rateLimits: { anonymous: 1e9, user: 1e9, service_account: 1e9 },
  });
  process.stdout.write(`listening ${cairn.url}\n`);
  await new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
  await cairn.close();
}
