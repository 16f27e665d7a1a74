// `npm run bench -- isolation [--sizes 1000,10000,100000] [--probes 20] [--servers]
//   [--backlog 100000] [--scan-facts 1000000] [--export-facts 2000000] [--connection-seconds 20]`
// One tenant's hub task against another tenant. For each hub size: dependents and edges are
// arranged by SQL (spread over 91 label sets: 7 projects x 13 assignees),
// their blocked state recorded and projected; then the hub is completed over HTTP and the run
// prints the PUT's latency, the projector's catch-up time and this process's RSS growth
// (embedded: the projector runs here), and, for another business during that catch-up, how
// long its new task takes to show in /query and its cheap query's p99 against idle.
// Then a backlog of facts (other businesses') is drained twice, once with nobody asking and once
// while the other business asks its cheap query: the drain times and that query's p99.
// Embedded engines by default; `--servers` uses the machine's Postgres and Redis. Then one
// address holds 1,100 slow connections while another probes /healthz (isolation-connections.ts),
// and 8 unread exports from 4 tokens sit beside another tenant's queries (isolation-exports.ts).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { type Cairn, startCairn } from '../apps/server/cairn.ts';
import { issueToken } from '../libs/auth/token.service.ts';
import { loadConfig } from '../libs/config/config.ts';
import { countUnprojected, loadCheckpoint } from '../libs/projection/outbox-reader.ts';
import { FACTS_CHECKPOINT } from '../libs/projection/projector.ts';
import { createScratchDatabase } from '../libs/storage/scratch-database.ts';
import { blockedChanges, blockedCounts } from '../libs/tasks/blocked-changes.repository.ts';
import { appendFacts } from '../libs/tasks/outbox.repository.ts';
import type { TaskRow } from '../libs/tasks/task.repository.ts';
import { taskFact, withBlockedChunks } from '../libs/tasks/task-facts.ts';
import {
  measureConnectionIsolation,
  PROBE_ADDRESS,
  SLOW_ADDRESS,
} from './isolation-connections.ts';
import { measureStalledExports } from './isolation-exports.ts';
import { measureScansBeside, scansLine } from './isolation-scans.ts';
import { numberOption, textOption } from './options.ts';
import { fillOutbox } from './outbox-fill.ts';
import { percentile } from './percentile.ts';

const POSTGRES = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const OTHER = 'other';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const MiB = 1024 * 1024;

interface Client {
  cairn: Cairn;
  call(
    method: string,
    route: string,
    body?: unknown,
    extra?: Record<string, string>,
  ): Promise<Response>;
}

/** Nothing waits past the projector's cursor. */
async function caughtUp(cairn: Cairn): Promise<boolean> {
  const db = cairn.engines.postgres.db;
  const checkpoint = await loadCheckpoint(db, FACTS_CHECKPOINT);
  return checkpoint.pending === null && (await countUnprojected(db, checkpoint.cursor)) === 0;
}

async function untilCaughtUp(cairn: Cairn): Promise<void> {
  while (!(await caughtUp(cairn))) await sleep(50);
}

/** The cheap query: today's creations of a business with a handful of tasks. */
async function cheapQuery(client: Client): Promise<{ ms: number; created: number }> {
  const started = performance.now();
  const response = await client.call(
    'POST',
    '/api/v1/query',
    { metrics: ['tasks_created'], period: 'today', business: OTHER },
    { 'cache-control': 'no-cache' },
  );
  const body = (await response.json()) as { data?: Array<{ tasks_created?: number }> };
  return { ms: performance.now() - started, created: body.data?.[0]?.tasks_created ?? 0 };
}

async function arrangeHub(client: Client, business: string, size: number): Promise<string> {
  const db = client.cairn.engines.postgres.db;
  const response = await client.call('POST', '/api/v1/tasks', { business, name: 'hub' });
  const hub = ((await response.json()) as { data: { gid: string } }).data.gid;
  for (let from = 0; from < size; from += 10_000) {
    const to = Math.min(size, from + 10_000) - 1;
    await sql`
      insert into tasks (gid, business, name, project, assignee, status, created_status)
      select ${business} || '-' || i, ${business}, 'dependent', 'p' || (i % 7), 'a' || (i % 13), 'open', 'open'
      from generate_series(${from}::int, ${to}::int) i`.execute(db);
    await sql`
      insert into task_dependencies (task_gid, dependency_gid, business)
      select ${business} || '-' || i, ${hub}, ${business}
      from generate_series(${from}::int, ${to}::int) i`.execute(db);
  }
  // What the edges' writes would have recorded: every dependent blocked from now on.
  const hubRow = (await sql<TaskRow>`select * from tasks where gid = ${hub}`.execute(db))
    .rows[0] as TaskRow;
  const changes = blockedChanges(
    new Map(),
    await blockedCounts(db, { gids: [], dependentsOf: hub }),
  );
  await appendFacts(
    db,
    withBlockedChunks(taskFact('blocked_changed', hubRow, new Date(), { blockedChanges: changes })),
  );
  client.cairn.engines.queue.add({ name: 'drain-outbox' }).catch(() => {});
  return hub;
}

async function idleP99(client: Client, probes: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < probes; i++) times.push((await cheapQuery(client)).ms);
  return percentile(times, 0.99);
}

async function measure(client: Client, size: number, probes: number): Promise<string> {
  const business = `hub${size}`;
  const hub = await arrangeHub(client, business, size);
  await untilCaughtUp(client.cairn);
  const idle = await idleP99(client, probes);
  const before = (await cheapQuery(client)).created;

  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  }, 50);
  const putStarted = performance.now();
  const put = await client.call('PUT', `/api/v1/tasks/${hub}`, { status: 'completed' });
  await put.arrayBuffer();
  const putMs = performance.now() - putStarted;
  if (put.status !== 200) throw new Error(`the hub's PUT answered ${put.status}`);

  // Another business writes right after the hub's facts, then polls until it sees its task.
  const written = performance.now();
  const created = await client.call('POST', '/api/v1/tasks', { business: OTHER, name: 'probe' });
  await created.arrayBuffer();
  let visibleMs = Number.NaN;
  const busy: number[] = [];
  let done = false;
  const catchUp = (async () => {
    await untilCaughtUp(client.cairn);
    done = true;
    return performance.now() - putStarted;
  })();
  while (!done || Number.isNaN(visibleMs)) {
    const probe = await cheapQuery(client);
    if (!done) busy.push(probe.ms);
    if (Number.isNaN(visibleMs) && probe.created > before) visibleMs = performance.now() - written;
    if (performance.now() - putStarted > 600_000) break;
  }
  const catchUpMs = await catchUp;
  clearInterval(sampler);
  const busyP99 = busy.length > 0 ? percentile(busy, 0.99) : Number.NaN;
  return [
    `hub ${String(size).padStart(6)}:`,
    `PUT ${putMs.toFixed(0)} ms,`,
    `catch-up ${(catchUpMs / 1000).toFixed(2)} s,`,
    `RSS growth ${((rssPeak - rssBefore) / MiB).toFixed(0)} MiB;`,
    `other business: write visible in ${(visibleMs / 1000).toFixed(2)} s,`,
    `cheap query p99 ${busyP99.toFixed(0)} ms during catch-up (${busy.length} probes)`,
    `vs ${idle.toFixed(0)} ms idle (${(busyP99 / idle).toFixed(2)}x)`,
  ].join(' ');
}

/** From the backlog's first write until the projector has caught up, probing meanwhile or not. */
async function drainBacklog(client: Client, facts: number, probe: boolean) {
  const { cairn } = client;
  const started = performance.now();
  const filled = (async () => {
    await fillOutbox(cairn.engines.postgres.db, facts);
    cairn.engines.queue.add({ name: 'drain-outbox' }).catch(() => {});
  })();
  const times: number[] = [];
  const before = probe ? (await cheapQuery(client)).created : 0;
  let visibleMs = Number.NaN;
  let written = Number.NaN;
  if (probe) {
    await filled;
    written = performance.now();
    await (
      await client.call('POST', '/api/v1/tasks', { business: OTHER, name: 'probe' })
    ).arrayBuffer();
  }
  await filled;
  while (!(await caughtUp(cairn)) || (probe && Number.isNaN(visibleMs))) {
    if (!probe) {
      await sleep(50);
      continue;
    }
    const answer = await cheapQuery(client);
    times.push(answer.ms);
    if (Number.isNaN(visibleMs) && answer.created > before) visibleMs = performance.now() - written;
  }
  return { seconds: (performance.now() - started) / 1000, times, visibleMs };
}

async function measureBacklog(client: Client, facts: number, probes: number): Promise<string> {
  await untilCaughtUp(client.cairn);
  const quiet = await drainBacklog(client, facts, false);
  const idle = await idleP99(client, probes);
  const busy = await drainBacklog(client, facts, true);
  const p99 = percentile(busy.times, 0.99);
  return [
    `backlog ${facts}:`,
    `drained in ${quiet.seconds.toFixed(2)} s with no query (${(facts / quiet.seconds).toFixed(0)} facts/s),`,
    `${busy.seconds.toFixed(2)} s while queried (${(facts / busy.seconds).toFixed(0)} facts/s);`,
    `other business: write visible in ${(busy.visibleMs / 1000).toFixed(2)} s,`,
    `cheap query p99 ${p99.toFixed(0)} ms, median ${percentile(busy.times, 0.5).toFixed(0)} ms during the drain (${busy.times.length} probes)`,
    `vs ${idle.toFixed(0)} ms idle (${(p99 / idle).toFixed(2)}x)`,
  ].join(' ');
}

export async function run(args: string[]): Promise<void> {
  const sizes = textOption(args, 'sizes', '1000,10000,100000')
    .split(',')
    .map(Number)
    .filter((size) => size > 0);
  const probes = numberOption(args, 'probes', 20);
  const servers = args.includes('--servers');
  process.stdout.write(
    `isolation benchmark on ${os.cpus().length} CPUs, Node ${process.version}, ${servers ? 'Postgres and Redis servers' : 'embedded engines'}, chDB\n`,
  );
  const database = servers ? await createScratchDatabase(POSTGRES, 'cairn_bench') : undefined;
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-bench-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    ...(database
      ? {
          DATABASE_URL: database.url,
          REDIS_URL: REDIS,
          CAIRN_REDIS_PREFIX: `cairn_bench_${randomBytes(4).toString('hex')}`,
        }
      : {}),
  });
  const cairn = await startCairn({ config, rateLimits: { service_account: 1e9, user: 1e9 } });
  try {
    const { token } = await issueToken(
      cairn.engines.postgres.db,
      {
        name: 'bench',
        scopes: ['workflows:read', 'workflows:write', 'analytics:read'],
        businesses: [OTHER, ...sizes.map((size) => `hub${size}`)],
        kind: 'service_account',
      },
      new Date(),
    );
    const client: Client = {
      cairn,
      call: (method, route, body, extra = {}) =>
        fetch(`${cairn.url}${route}`, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            ...extra,
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
    };
    await client.call('POST', '/api/v1/tasks', { business: OTHER, name: 'seed' });
    await untilCaughtUp(cairn);
    const lines: string[] = [];
    for (const size of sizes) {
      const line = await measure(client, size, probes);
      process.stdout.write(`${line}\n`);
      lines.push(line);
    }
    const backlog = numberOption(args, 'backlog', 100_000);
    if (backlog > 0) process.stdout.write(`${await measureBacklog(client, backlog, probes)}\n`);
    process.stdout.write(
      'targets: catch-up at 100k <= 12x the 10k figure and <= 30 s, RSS growth <= 256 MiB, PUT <= 2 s, other write visible <= 5 s, cheap query p99 <= 2x idle\n',
    );
  } finally {
    await cairn.close();
    await database?.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
  const scanFacts = numberOption(args, 'scan-facts', 1_000_000);
  if (scanFacts > 0) {
    const scans = await measureScansBeside({ facts: scanFacts, probes });
    process.stdout.write(`${scansLine(scans, scanFacts)}\n`);
  }
  const exports = await measureStalledExports({
    facts: numberOption(args, 'export-facts', 2_000_000),
    probes,
  });
  process.stdout.write(
    `stalled exports: 8 downloads from 4 tokens left unread (${exports.bodyBytes.map((bytes) => `${(bytes / 1024).toFixed(0)} KiB`).join(', ')} reached their readers), ${exports.admittedWhileStalled} queries admitted meanwhile; another tenant's cheap query p99 ${exports.stalledP99.toFixed(1)} ms vs ${exports.idleP99.toFixed(1)} ms idle (${(exports.stalledP99 / exports.idleP99).toFixed(2)}x)${Object.keys(exports.refused).length ? `, refused ${JSON.stringify(exports.refused)}` : ', none refused'} (target <= 2x idle, no 503)\n`,
  );
  // After the hubs, on a server of its own in a child process (default connection limits), so
  // the slow sockets and the probes do not share the server's event loop.
  const seconds = numberOption(args, 'connection-seconds', 20);
  const slow = await measureConnectionIsolation({ seconds });
  process.stdout.write(
    `slow connections: 1,100 partial-header sockets from ${SLOW_ADDRESS} for ${seconds} s; ${PROBE_ADDRESS} served ${slow.served} of ${slow.probes} /healthz probes (${(100 * slow.ratio).toFixed(1)} %)${Object.keys(slow.failures).length ? `, failures ${JSON.stringify(slow.failures)}` : ''} (target >= 99 %)\n`,
  );
}
