// `npm run bench -- refresh [--facts 10000000] [--dashboards 20] [--businesses 5]
//   [--interval-ms 5000] [--seconds 60] [--writes-per-second 200] [--seed 1] [--data-root DIR]`:
// dashboards refreshing query.bench.ts's seven queries over HTTP, spread over the first
// `businesses` businesses (each dashboard's token reads its own business alone), first with no
// writes, then while a writer creates and moves tasks of the first business through the API;
// each with the result cache on, then off (a second start on the same data directory). The
// engine statements are counted per business they read: the other businesses' dashboards should
// run none after their first refresh. Facts are loaded by the `demo` command into DIR/<N> (or a
// temporary directory) unless an earlier run left them there.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { type Cairn, startCairn } from '../apps/server/cairn.ts';
import type { QueryRequest } from '../libs/analytics/parse/query-parser.ts';
import { ROLLUPS } from '../libs/analytics/sources/rollups.ts';
import type { Scope } from '../libs/auth/principal.ts';
import { issueToken } from '../libs/auth/token.service.ts';
import { loadConfig } from '../libs/config/config.ts';
import { DEMO_FACT_ID_BASE } from '../libs/demo/fact-generator.ts';
import { readProjection } from '../libs/projection/projection-freshness.ts';
import { type Dashboard, type DashboardFigures, refreshDashboards } from './dashboard-refresh.ts';
import { httpCall } from './http-call.ts';
import { numberOption, textOption } from './options.ts';
import { percentile } from './percentile.ts';
import { QUERIES } from './query.bench.ts';
import { startTaskWriter, type WriterFigures } from './task-writer.ts';

interface Settings {
  facts: number;
  dashboards: number;
  /** How many businesses the dashboards read (of the 20 `demo` generates); the writer's is the first. */
  businesses: number;
  intervalMs: number;
  seconds: number;
  writesPerSecond: number;
  seed: number;
}

interface Outcome {
  phase: 'no writes' | 'with writes';
  cache: 'on' | 'off';
  dashboards: DashboardFigures;
  statementsPerCycle: number;
  /** Projector batches committed per cycle during the phase. */
  batchesPerCycle: number;
  /** The same after every dashboard's first refresh. */
  laterBatches: number;
  /**
   * Engine statements per cycle after every dashboard's first refresh, of the written
   * business's dashboards and of the others' together.
   */
  later: { written: number; others: number };
  /** The same, in the first refresh (every dashboard's first), as a total. */
  first: { written: number; others: number };
  writer?: WriterFigures;
  /** Rejections the service left unhandled during the phase: the first one's message. */
  unhandled: { count: number; first?: string };
}

/**
 * The service runs in this process, and a rejection it leaves unhandled would end the run
 * (Node's default): each is kept and printed with its phase instead, as a defect to fix.
 */
const unhandledRejections: string[] = [];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function run(args: string[]): Promise<void> {
  const settings: Settings = {
    facts: numberOption(args, 'facts', 10_000_000),
    dashboards: numberOption(args, 'dashboards', 20),
    businesses: numberOption(args, 'businesses', 5),
    intervalMs: numberOption(args, 'interval-ms', 5000),
    seconds: numberOption(args, 'seconds', 60),
    writesPerSecond: numberOption(args, 'writes-per-second', 200),
    seed: numberOption(args, 'seed', 1),
  };
  const root = textOption(args, 'data-root', '');
  process.on('unhandledRejection', (reason) => {
    unhandledRejections.push(reason instanceof Error ? reason.message : String(reason));
  });
  process.stdout.write(
    `refresh benchmark on ${os.cpus().length} CPUs, Node ${process.version}, embedded chDB: ` +
      `${settings.facts.toLocaleString('en-US')} facts, ${settings.dashboards} dashboards × ` +
      `${QUERIES.length} queries over ${settings.businesses} businesses every ` +
      `${settings.intervalMs} ms for ${settings.seconds} s, writer ${settings.writesPerSecond} ` +
      `writes/s to ${businessOf(0)}\n`,
  );
  const dataDir = root
    ? path.join(root, String(settings.facts))
    : await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-refresh-'));
  const outcomes: Outcome[] = [];
  try {
    // A temporary directory exists already, empty: only a data root's can hold earlier facts.
    if (!root || !(await exists(dataDir))) await loadDemoFacts(dataDir, settings.facts);
    for (const cache of ['on', 'off'] as const) {
      outcomes.push(...(await measureServer(dataDir, cache, settings)));
    }
  } finally {
    if (!root) await fs.rm(dataDir, { recursive: true, force: true });
  }
  printSummary(outcomes, settings);
}

const exists = (file: string) =>
  fs.stat(file).then(
    () => true,
    () => false,
  );

/**
 * Loads generated facts as an operator would, with `npm run cli -- demo` (it also works out the
 * blocked rollups the generator cannot write), in a child: chDB allows one process per data
 * directory, and this one opens it next.
 */
async function loadDemoFacts(dataDir: string, facts: number): Promise<void> {
  const cli = path.join(import.meta.dirname, '..', 'apps', 'cli', 'main.ts');
  const child = spawn(process.execPath, [...process.execArgv, cli, 'demo', '--facts', `${facts}`], {
    env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (code !== 0) throw new Error(`loading ${facts} demo facts into ${dataDir} exited ${code}`);
}

/** One server start on `dataDir` with the result cache on or off: both phases. */
async function measureServer(
  dataDir: string,
  cache: 'on' | 'off',
  settings: Settings,
): Promise<Outcome[]> {
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'silent',
    // Writes reach the answers (and move the watermark) within a tenth of a second.
    CAIRN_PROJECTOR_POLL_MS: '100',
    // Every dashboard and the writer connect from 127.0.0.1, where browsers would come from
    // addresses of their own; and a kept-alive socket must outlive the refresh interval, or
    // the server closes it just as the next refresh reuses it.
    CAIRN_HTTP_MAX_CONNECTIONS_PER_ADDRESS: '1000',
    CAIRN_HTTP_KEEPALIVE_TIMEOUT_MS: String(settings.intervalMs + 5000),
    ...(cache === 'off' ? { CAIRN_QUERY_CACHE_BYTES: '0' } : {}),
  });
  // The writer's one token sends 200 writes/s: the contract's 5000 a minute per token would
  // refuse it within half a minute.
  const cairn = await startCairn({ config, rateLimits: { service_account: 10_000_000 } });
  try {
    await settleTables(cairn, settings.facts);
    const db = cairn.engines.postgres.db;
    const issue = async (name: string, scopes: Scope[], businesses: string[]) =>
      (await issueToken(db, { name, scopes, businesses, kind: 'service_account' }, new Date()))
        .token;
    const dashboards: Dashboard[] = [];
    for (let i = 0; i < settings.dashboards; i++) {
      const business = businessOf(i % settings.businesses);
      dashboards.push({
        token: await issue(`refresh bench dashboard ${i}`, ['analytics:read'], [business]),
        queries: QUERIES.map(([, request]) => ownBusiness(request, business)),
      });
    }
    const written = businessOf(0);
    const writeToken = await issue(
      'refresh bench writer',
      ['workflows:read', 'workflows:write'],
      [written],
    );
    const statements = countStatements(cairn);
    const outcomes: Outcome[] = [];
    for (const phase of ['no writes', 'with writes'] as const) {
      // Each phase starts with every earlier write projected: none moves the watermark in a
      // phase without writes.
      await drainProjection(cairn);
      const before = await statementsRun(cairn.url);
      const batchesBefore = await batchesProjected(cairn.url);
      const start = new Map(statements);
      let first: Map<string, number> | undefined;
      let batchesAtFirst: Promise<number> | undefined;
      const unhandledBefore = unhandledRejections.length;
      const writer =
        phase === 'with writes'
          ? startTaskWriter({
              url: cairn.url,
              token: writeToken,
              businesses: [written],
              perSecond: settings.writesPerSecond,
            })
          : undefined;
      // The writer stops when the dashboards' last refresh is due, not when it is answered.
      const writing = writer && sleep(settings.seconds * 1000).then(() => writer.stop());
      const figures = await refreshDashboards({
        url: cairn.url,
        dashboards,
        afterFirstRefresh: () => {
          first = new Map(statements);
          batchesAtFirst = batchesProjected(cairn.url);
        },
        intervalMs: settings.intervalMs,
        seconds: settings.seconds,
        seed: settings.seed,
      });
      const since = (business: string) =>
        (statements.get(business) ?? 0) - (first?.get(business) ?? 0);
      const atFirst = (business: string) =>
        (first?.get(business) ?? 0) - (start.get(business) ?? 0);
      const others = Array.from({ length: settings.businesses - 1 }, (_, i) => businessOf(i + 1));
      const laterCycles = cycles(settings) - 1;
      const outcome: Outcome = {
        phase,
        cache,
        dashboards: figures,
        statementsPerCycle: ((await statementsRun(cairn.url)) - before) / cycles(settings),
        batchesPerCycle: ((await batchesProjected(cairn.url)) - batchesBefore) / cycles(settings),
        laterBatches:
          ((await batchesProjected(cairn.url)) - (await (batchesAtFirst ?? batchesBefore))) /
          laterCycles,
        later: {
          written: since(written) / laterCycles,
          others: others.reduce((sum, business) => sum + since(business), 0) / laterCycles,
        },
        first: {
          written: atFirst(written),
          others: others.reduce((sum, business) => sum + atFirst(business), 0),
        },
        writer: await writing,
        unhandled: {
          count: unhandledRejections.length - unhandledBefore,
          first: unhandledRejections[unhandledBefore],
        },
      };
      outcomes.push(outcome);
      process.stdout.write(`${describe(outcome)}\n`);
    }
    await drainProjection(cairn);
    return outcomes;
  } finally {
    await cairn.close();
  }
}

/**
 * Checks the directory holds the facts asked for, waits for rollups still filling at start-up,
 * then merges every partition of more than one part (a load's, a backfill's, an earlier run's
 * writes): dashboards should read settled parts, not tables merging in the background.
 * Generated facts are told apart from earlier runs' writes by id.
 */
async function settleTables(cairn: Cairn, facts: number): Promise<void> {
  const ch = cairn.engines.clickhouse.client;
  const counted = await ch.query({
    query: 'SELECT countIf(fact_id >= {base:UInt64}) AS n FROM facts',
    query_params: { base: DEMO_FACT_ID_BASE },
    format: 'JSON',
  });
  const generated = Number(((await counted.json()) as { data: Array<{ n: number }> }).data[0]?.n);
  if (generated !== facts) {
    throw new Error(`${cairn.config.dataDir} holds ${generated} generated facts, not ${facts}`);
  }
  while (cairn.rollups.ready().size < ROLLUPS.length) await sleep(1000);
  for (const table of ['facts', ...ROLLUPS.map((r) => r.table)]) {
    await ch.command({
      query: `OPTIMIZE TABLE ${table} FINAL SETTINGS optimize_skip_merged_partitions = 1`,
    });
  }
}

/** The `i`th of the businesses `demo` generates. */
const businessOf = (i: number) => `biz-${i}`;

/** A dashboard query as a screen of `business` sends it: one naming a business names its own. */
const ownBusiness = (request: QueryRequest, business: string): QueryRequest =>
  'business' in request ? { ...request, business } : request;

/**
 * Counts the engine statements cairn's analytics run, by the businesses they read (every
 * analytics statement binds them as `businesses`; a dashboard here reads one business alone),
 * as the client the service holds sees them: the service's own counter has no business label.
 */
function countStatements(cairn: Cairn): Map<string, number> {
  const counts = new Map<string, number>();
  const client = cairn.engines.clickhouse.client;
  const query = client.query.bind(client);
  client.query = ((params: Parameters<typeof query>[0]) => {
    const businesses = (params.query_params as { businesses?: string[] } | undefined)?.businesses;
    const key = businesses ? businesses.join(',') : 'every business';
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return query(params);
  }) as typeof client.query;
  return counts;
}

/** Waits until the projector has nothing left in the outbox. */
async function drainProjection(cairn: Cairn): Promise<void> {
  const deadline = Date.now() + 300_000;
  while ((await readProjection(cairn.engines.postgres.db)).oldest !== null) {
    if (Date.now() > deadline) throw new Error('the projector did not catch up within 5 minutes');
    await sleep(100);
  }
}

/** A counter as /metrics has it now. */
async function counted(url: string, name: string): Promise<number> {
  const agent = new http.Agent();
  const answer = await httpCall(agent, 'GET', `${url}/metrics`, {});
  agent.destroy();
  const line = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(answer.body);
  if (!line) throw new Error(`/metrics has no ${name}`);
  return Number(line[1]);
}

const statementsRun = (url: string) => counted(url, 'cairn_analytics_engine_statements_total');
/** Batches the projector has committed: each moves the written business's answers. */
const batchesProjected = (url: string) => counted(url, 'cairn_projector_batch_facts_count');

const cycles = (settings: Settings) => (settings.seconds * 1000) / settings.intervalMs;

/** The figures of one phase and cache mode; latencies are taken after each dashboard's first refresh. */
function figuresOf(outcome: Outcome) {
  const { later, refreshMs, answerMs } = outcome.dashboards;
  const answers = later.hit + later.miss + later.coalesced;
  const share = (n: number) => (answers ? (100 * n) / answers : Number.NaN);
  return {
    hits: share(later.hit),
    coalesced: share(later.coalesced),
    answerP50: percentile(answerMs, 0.5),
    answerP99: percentile(answerMs, 0.99),
    refreshP50: percentile(refreshMs, 0.5),
    refreshP99: percentile(refreshMs, 0.99),
    writesPerSecond: outcome.writer ? outcome.writer.written / outcome.writer.seconds : 0,
  };
}

function describe(outcome: Outcome): string {
  const f = figuresOf(outcome);
  const { dashboards, writer, unhandled } = outcome;
  const failures = dashboards.failed
    ? `, ${dashboards.failed} failed queries (last: ${dashboards.lastFailure})`
    : '';
  const writes = writer
    ? `; writer ${f.writesPerSecond.toFixed(1)} writes/s (${writer.written} written, ${writer.failed} failed, ${writer.skipped} skipped${writer.lastFailure ? `, last failure: ${writer.lastFailure}` : ''})`
    : '';
  const defects = unhandled.count
    ? `; ${unhandled.count} rejections the service left unhandled (first: ${unhandled.first})`
    : '';
  return (
    `${outcome.phase}, cache ${outcome.cache}: ${dashboards.refreshes} refreshes, ` +
    `hits ${f.hits.toFixed(1)} %, coalesced ${f.coalesced.toFixed(1)} %, ` +
    `${outcome.statementsPerCycle.toFixed(1)} engine statements per cycle (${QUERIES.length} distinct queries per business; ` +
    `after the first refresh, written business ${outcome.later.written.toFixed(1)}, the others ${outcome.later.others.toFixed(1)}; ` +
    `in the first, ${outcome.first.written} and ${outcome.first.others} in all; ` +
    `${outcome.batchesPerCycle.toFixed(1)} batches projected per cycle, ${outcome.laterBatches.toFixed(1)} after the first refresh), ` +
    `answer p50 ${f.answerP50.toFixed(2)} ms p99 ${f.answerP99.toFixed(2)} ms, ` +
    `refresh p50 ${f.refreshP50.toFixed(2)} ms p99 ${f.refreshP99.toFixed(2)} ms${failures}${writes}${defects}`
  );
}

function printSummary(outcomes: Outcome[], settings: Settings): void {
  const rows = outcomes.map((outcome) => {
    const f = figuresOf(outcome);
    return `| ${outcome.phase} | ${outcome.cache} | ${outcome.dashboards.refreshes} | ${f.hits.toFixed(1)} | ${f.coalesced.toFixed(1)} | ${outcome.statementsPerCycle.toFixed(1)} | ${outcome.later.written.toFixed(1)} | ${outcome.later.others.toFixed(1)} | ${QUERIES.length} | ${f.answerP50.toFixed(2)} | ${f.answerP99.toFixed(2)} | ${f.refreshP50.toFixed(2)} | ${f.refreshP99.toFixed(2)} | ${outcome.writer ? f.writesPerSecond.toFixed(1) : '–'} |`;
  });
  process.stdout.write(
    `\n${settings.facts.toLocaleString('en-US')} facts; hits, coalesced and latencies after each dashboard's first refresh; statements per ${settings.intervalMs} ms cycle over the whole phase, and after the first refresh for the written business's dashboards and the other ${settings.businesses - 1} businesses' together\n\n| phase | cache | refreshes | hits % | coalesced % | engine statements / cycle | written business, later | other businesses, later | distinct queries per business | answer p50 ms | answer p99 ms | refresh p50 ms | refresh p99 ms | writes/s |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n${rows.join('\n')}\n`,
  );
  const find = (phase: Outcome['phase'], cache: Outcome['cache']) => {
    const outcome = outcomes.find((o) => o.phase === phase && o.cache === cache);
    return outcome && { ...figuresOf(outcome), later: outcome.later };
  };
  const quiet = find('no writes', 'on');
  const busy = find('with writes', 'on');
  const busyOff = find('with writes', 'off');
  if (!quiet || !busy || !busyOff) return;
  const check = (holds: boolean) => (holds ? 'yes' : 'NO');
  process.stdout.write(
    [
      '',
      'Targets:',
      `- no writes, cache on: hits ${quiet.hits.toFixed(1)} % ≥ 99 %: ${check(quiet.hits >= 99)}`,
      `- no writes, cache on: answer p50 ${quiet.answerP50.toFixed(2)} ms ≤ 2 ms: ${check(quiet.answerP50 <= 2)} (refresh p50 ${quiet.refreshP50.toFixed(2)} ms: ${check(quiet.refreshP50 <= 2)})`,
      `- with writes, cache on: the other businesses' dashboards, engine statements per cycle after the first ${busy.later.others.toFixed(1)} = 0: ${check(busy.later.others === 0)}`,
      `- with writes, cache on: the written business's dashboards, engine statements per cycle after the first ${busy.later.written.toFixed(1)} ≤ ${QUERIES.length} distinct queries: ${check(busy.later.written <= QUERIES.length)}`,
      `- with writes: refresh p99 cache on ${busy.refreshP99.toFixed(2)} ms ≤ refresh p50 cache off ${busyOff.refreshP50.toFixed(2)} ms: ${check(busy.refreshP99 <= busyOff.refreshP50)}`,
      '',
    ].join('\n'),
  );
}
