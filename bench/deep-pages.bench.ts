// `npm run bench -- deep-pages [--tasks 1000000] [--seconds 10] [--samples 3]` on the machine's
// Postgres (TEST_POSTGRES_URL overrides). One business holds `tasks` tasks (a spread of
// statuses and creation times), another a few thousand. First, single deep page-number pages of
// the big business, one at a time: the page at the depth bound, pages past it, and the same with
// a status filter (status, HTTP code, latency). Then the other business's task list, p50/p99/max
// of one client in a loop, idle and while 4 clients fetch deep pages of the big business with a
// status filter, back to back and then paced at one a second each. The server runs in a child process so load and service do not share an event
// loop; on this small box they still share the two cores with Postgres.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { startCairn } from '../apps/server/cairn.ts';
import { issueToken } from '../libs/auth/token.service.ts';
import { loadConfig, POSTGRES_DEFAULTS } from '../libs/config/config.ts';
import type { Db } from '../libs/storage/database.ts';
import { openPostgres } from '../libs/storage/postgres.ts';
import { migratePostgres } from '../libs/storage/postgres-migrations.ts';
import { createScratchDatabase } from '../libs/storage/scratch-database.ts';
import { numberOption } from './options.ts';
import { percentile } from './percentile.ts';
import { serveChild } from './serve-child.ts';

const POSTGRES = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const OTHER_TASKS = 5_000;

/** The pages measured one at a time; each a query of the big business's list. */
const SINGLE_PAGES: ReadonlyArray<readonly [string, string]> = [
  ['page 1, 20 per page', 'page=1&per_page=20'],
  ['page 1, status filter', 'page=1&per_page=20&status=in_progress'],
  ['page 100 × 100 (row 10,000)', 'page=100&per_page=100'],
  ['page 100 × 100, status filter', 'page=100&per_page=100&status=in_progress'],
  [
    'page 100 × 100, status + created_at',
    `page=100&per_page=100&status=open&created_at[gte]=2026-03-01`,
  ],
  ['page 100 × 100, sort=name', 'page=100&per_page=100&sort=name&order=asc'],
  ['page 100 × 100, sort=due_on, status', 'page=100&per_page=100&sort=due_on&status=cancelled'],
  ['page 9999 × 100', 'page=9999&per_page=100'],
  ['page 2147483647 × 100', 'page=2147483647&per_page=100'],
  ['page 9999 × 100, status filter', 'page=9999&per_page=100&status=in_progress'],
  ['page 999 × 100, status filter', 'page=999&per_page=100&status=in_progress'],
];

/** What 4 clients fetch while the other business's list is timed. */
const DEEP_UNDER_LOAD = 'page=9999&per_page=100&status=in_progress';

export async function run(args: string[]): Promise<void> {
  if (args[0] === '--serve') return serve(args[1]!, args[2]!);
  const count = numberOption(args, 'tasks', 1_000_000);
  const seconds = numberOption(args, 'seconds', 10);
  const samples = numberOption(args, 'samples', 3);
  const database = await createScratchDatabase(POSTGRES, 'cairn_bench');
  const url = new URL(database.url);
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-bench-'));
  // Loading a million rows and building indexes runs far past a request's time limit.
  const db = await openPostgres({
    url: url.toString(),
    timeouts: { ...POSTGRES_DEFAULTS.timeouts, statementMs: 30 * 60_000 },
  });
  let child: ChildProcess | undefined;
  try {
    await migratePostgres(db.db);
    const started = Date.now();
    await load(db.db, 'big', count);
    await load(db.db, 'other', OTHER_TASKS);
    await sql`vacuum analyze tasks`.execute(db.db);
    await sql`checkpoint`.execute(db.db);
    const big = await bearer(db.db, 'big');
    const other = await bearer(db.db, 'other');
    const server = await startChild(url.toString(), dataDir);
    child = server.child;
    console.log(
      `deep pages: ${count} tasks in business "big" (loaded in ${((Date.now() - started) / 1000).toFixed(0)} s), ${OTHER_TASKS} in "other"; Postgres statement limit ${POSTGRES_DEFAULTS.timeouts.statementMs} ms`,
    );
    const list = (query: string, headers: Record<string, string>) =>
      timed(`${server.url}/api/v1/tasks?${query}`, headers);
    // Warm: the first requests compile hot paths and fill Postgres's caches.
    for (let i = 0; i < 20; i++) await list('business=other', other);
    await list('business=big&page=1&per_page=20', big);

    console.log('\none deep page at a time (median of samples; status of each sample)');
    console.log('page                                    median ms  statuses  meta');
    for (const [label, query] of SINGLE_PAGES) {
      const runs = [];
      for (let i = 0; i < samples; i++) runs.push(await list(`business=big&${query}`, big));
      const meta = runs.at(-1)?.meta;
      console.log(
        `${label.padEnd(40)}${percentile(
          runs.map((r) => r.ms),
          0.5,
        )
          .toFixed(0)
          .padStart(
            9,
          )}  ${runs.map((r) => r.status).join(',')}  ${meta ? JSON.stringify(meta) : ''}`,
      );
    }

    const idle = await loop(() => list('business=other', other), seconds);
    console.log(
      `\nbusiness "other", list page 1 (20 per page), one client, ${seconds} s:\n  idle:              ${figures(idle)}`,
    );
    // Four clients back to back (each starts its next deep page as the last one answers), then
    // four clients that each send one deep page a second: the first shows what the box does
    // saturated, the second what each deep page costs the others.
    for (const paceMs of [0, 1_000]) {
      const stop = { at: performance.now() + seconds * 1000 };
      const deepStatuses = new Map<number, number>();
      const deepMs: number[] = [];
      const deep = Array.from({ length: 4 }, async () => {
        while (performance.now() < stop.at) {
          const res = await list(`business=big&${DEEP_UNDER_LOAD}`, big);
          deepStatuses.set(res.status, (deepStatuses.get(res.status) ?? 0) + 1);
          deepMs.push(res.ms);
          if (paceMs > res.ms) await new Promise((resolve) => setTimeout(resolve, paceMs - res.ms));
        }
      });
      const loaded = await loop(() => list('business=other', other), seconds);
      await Promise.all(deep);
      console.log(
        `  4 deep pages, ${paceMs === 0 ? 'back to back' : 'one a second each'}: ${figures(loaded)}\n    the deep pages (${DEEP_UNDER_LOAD}): ${deepMs.length} answered, statuses ${JSON.stringify(Object.fromEntries(deepStatuses))}, p50 ${percentile(deepMs, 0.5).toFixed(0)} ms, max ${Math.max(...deepMs).toFixed(0)} ms`,
      );
    }
  } finally {
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

/**
 * `count` tasks in `business`: statuses about 50 % completed, 25 % open, 20 % in progress, 5 %
 * cancelled; creation times over the year to the end of 2026, four in five with a due date.
 */
async function load(db: Db, business: string, count: number): Promise<void> {
  await sql`insert into tasks (gid, business, name, project, assignee, status, due_on,
      created_at, updated_at, completed_at)
    select ${business} || '-' || i, ${business}, 'task ' || md5(i::text), 'p' || (i % 20),
      'a' || (i % 50),
      case when i % 20 < 10 then 'completed' when i % 20 < 15 then 'open'
           when i % 20 < 19 then 'in_progress' else 'cancelled' end,
      case when i % 5 = 0 then null else date '2026-01-01' + (i % 400) end,
      timestamptz '2026-01-01' + (interval '365 days' * i / ${count}),
      timestamptz '2026-01-01' + (interval '365 days' * i / ${count}),
      case when i % 20 < 10 then timestamptz '2026-01-02' + (interval '365 days' * i / ${count}) end
    from generate_series(1, ${count}) as i`.execute(db);
}

async function bearer(db: Db, business: string): Promise<Record<string, string>> {
  const { token } = await issueToken(
    db,
    { name: business, scopes: ['workflows:read'], businesses: [business], kind: 'service_account' },
    new Date(),
  );
  return { authorization: `Bearer ${token}` };
}

interface Timed {
  status: number;
  ms: number;
  meta: Record<string, unknown> | undefined;
}

async function timed(url: string, headers: Record<string, string>): Promise<Timed> {
  const started = performance.now();
  const res = await fetch(url, { headers });
  const body = (await res.json()) as { meta?: Record<string, unknown> };
  const ms = performance.now() - started;
  const meta = body.meta
    ? Object.fromEntries(
        Object.entries(body.meta).filter(([key]) => key !== 'request_id' && key !== 'timestamp'),
      )
    : undefined;
  return { status: res.status, ms, meta };
}

/** One client calling `fetchOnce` back to back for `seconds`. */
async function loop(fetchOnce: () => Promise<Timed>, seconds: number): Promise<Timed[]> {
  const until = performance.now() + seconds * 1000;
  const results: Timed[] = [];
  while (performance.now() < until) results.push(await fetchOnce());
  return results;
}

function figures(results: Timed[]): string {
  const ms = results.map((r) => r.ms);
  const failed = results.filter((r) => r.status !== 200).length;
  return `${results.length} requests, p50 ${percentile(ms, 0.5).toFixed(0)} ms, p99 ${percentile(ms, 0.99).toFixed(0)} ms, max ${Math.max(...ms).toFixed(0)} ms, non-200 ${failed}`;
}

function startChild(databaseUrl: string, dataDir: string) {
  return serveChild('deep-pages', [databaseUrl, dataDir]);
}

/** The child: one Cairn (api + projector, chDB) with its default settings, rate limits aside. */
async function serve(databaseUrl: string, dataDir: string): Promise<void> {
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'silent',
  });
  const cairn = await startCairn({
    config,
    rateLimits: { anonymous: 1e9, user: 1e9, service_account: 1e9 },
  });
  process.stdout.write(`listening ${cairn.url}\n`);
  await new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
  await cairn.close();
}
