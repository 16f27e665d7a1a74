// `npm run bench -- graph [--tasks 100000] [--edges 300000] [--runs 5] [--trials 100000]` on the
// machine's Postgres (TEST_POSTGRES_URL overrides). One business of `--tasks` open tasks in
// projects of 1,000, each depending on up to three earlier tasks (95 % in its own project, the
// rest anywhere before it) until `--edges` edges: then critical paths from a late, a middle and
// an early task, and the top 20 bottlenecks (of the business, and of one project), each through
// the service's use case (its statements on Postgres, then the computation), `--runs` times.
// Then forecasts of `--trials` trials over three histories (the simulation alone: the two
// ClickHouse reads before it are those of any /query).
import { sql } from 'kysely';
import { random } from '../apps/server/first-start-dataset.ts';
import { simulateCompletion } from '../libs/analytics/forecast/monte-carlo.ts';
import type { Principal } from '../libs/auth/principal.ts';
import { POSTGRES_DEFAULTS } from '../libs/config/config.ts';
import type { Db } from '../libs/storage/database.ts';
import { openPostgres } from '../libs/storage/postgres.ts';
import { migratePostgres } from '../libs/storage/postgres-migrations.ts';
import { createScratchDatabase } from '../libs/storage/scratch-database.ts';
import { bottlenecks, criticalPath } from '../libs/tasks/graph/graph-reads.service.ts';
import { numberOption } from './options.ts';
import { percentile } from './percentile.ts';

const POSTGRES = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MASTER: Principal = { kind: 'master' };
const PROJECT = 1_000;

async function seedGraph(db: Db, tasks: number, edges: number): Promise<void> {
  await sql`insert into tasks (gid, business, name, project, due_on, created_at, updated_at)
    select 'g' || i, 'graph', 'task ' || i, 'p' || (i / ${PROJECT}),
      case when i % 10 = 0 then date '2026-01-01' + (i % 700) end,
      timestamptz '2026-01-01' + make_interval(secs => i),
      timestamptz '2026-01-01' + make_interval(secs => i)
    from generate_series(0, ${tasks - 1}) as i`.execute(db);
  const next = random(1);
  const seen = new Set<string>();
  const from: string[] = [];
  const to: string[] = [];
  while (from.length < edges) {
    const i = 1 + Math.floor(next() * (tasks - 1));
    const first = Math.floor(i / PROJECT) * PROJECT;
    const j =
      next() < 0.05 || i === first
        ? Math.floor(next() * i)
        : first + Math.floor(next() * (i - first));
    const key = `${i}>${j}`;
    if (seen.has(key)) continue;
    seen.add(key);
    from.push(`g${i}`);
    to.push(`g${j}`);
  }
  for (let at = 0; at < edges; at += 50_000) {
    await sql`insert into task_dependencies (task_gid, dependency_gid, business)
      select w, d, 'graph' from unnest(${from.slice(at, at + 50_000)}::text[],
        ${to.slice(at, at + 50_000)}::text[]) as e(w, d)`.execute(db);
  }
  await sql`analyze`.execute(db);
}

async function timed(runs: number, work: () => Promise<unknown>): Promise<string> {
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    await work();
    times.push(performance.now() - started);
  }
  return `p50 ${percentile(times, 0.5).toFixed(0)} ms, max ${Math.max(...times).toFixed(0)} ms`;
}

export async function run(args: string[]): Promise<void> {
  const tasks = numberOption(args, 'tasks', 100_000);
  const edges = numberOption(args, 'edges', 300_000);
  const runs = numberOption(args, 'runs', 5);
  const trials = numberOption(args, 'trials', 100_000);
  const database = await createScratchDatabase(POSTGRES, 'cairn_bench');
  const pg = await openPostgres({
    url: database.url,
    timeouts: { ...POSTGRES_DEFAULTS.timeouts, statementMs: 30 * 60_000 },
  });
  try {
    await migratePostgres(pg.db);
    const seeded = performance.now();
    await seedGraph(pg.db, tasks, edges);
    console.log(
      `graph: ${tasks} open tasks, ${edges} edges in one business (seeded in ${((performance.now() - seeded) / 1000).toFixed(0)} s); ${runs} runs each`,
    );
    const deps = { db: pg.db, now: () => new Date('2026-06-01T00:00:00Z') };
    for (const [label, gid] of [
      ['critical path, last task', `g${tasks - 1}`],
      ['critical path, middle task', `g${Math.floor(tasks / 2)}`],
      ['critical path, early task', `g${PROJECT / 2}`],
    ] as const) {
      const chain = await criticalPath(deps, gid, MASTER);
      console.log(
        `${label.padEnd(30)} ${await timed(runs, () => criticalPath(deps, gid, MASTER))}  (chain of ${chain.length})`,
      );
    }
    for (const [label, project] of [
      ['bottlenecks, top 20', undefined],
      ['bottlenecks, top 20 of p50', 'p50'],
    ] as const) {
      const input = { business: 'graph', limit: 20, ...(project ? { project } : {}) };
      const top = await bottlenecks(deps, input, MASTER);
      console.log(
        `${label.padEnd(30)} ${await timed(runs, () => bottlenecks(deps, input, MASTER))}  (first blocks ${top[0]?.blocked_count}, 20th ${top.at(-1)?.blocked_count})`,
      );
    }
    const next = random(2);
    for (const [label, daily, open] of [
      ['forecast, 90 days of ~5/day, 300 open', days(90, () => Math.floor(next() * 11)), 300],
      ['forecast, 90 days of ~5/day, 8000 open', days(90, () => Math.floor(next() * 11)), 8_000],
      [
        'forecast, bursty 365 days, 20000 open',
        days(365, () => (next() < 0.05 ? Math.floor(next() * 400) : Math.floor(next() * 4))),
        20_000,
      ],
    ] as const) {
      const quantiles = [0.5, 0.85, 0.95];
      const answer = simulateCompletion({ daily, open, trials, seed: 1, quantiles });
      const figure = await timed(runs, async () =>
        simulateCompletion({ daily, open, trials, seed: 1, quantiles }),
      );
      console.log(
        `${label.padEnd(40)} ${trials} trials: ${figure}  (days ${answer.map((d) => d ?? 'beyond the horizon').join(' / ')})`,
      );
    }
  } finally {
    await pg.close();
    await database.drop();
  }
}

function days(count: number, draw: () => number): number[] {
  return Array.from({ length: count }, draw);
}
