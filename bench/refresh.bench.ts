// `npm run bench -- refresh [--facts 10000000] [--dashboards 20] [--interval-ms 5000]
//   [--seconds 60] [--writes-per-second 200] [--seed 1] [--data-root DIR]`: dashboards refreshing
// query.bench.ts's seven queries over HTTP, first with no writes, then while a writer creates and
// moves tasks through the API; each with the result cache on, then off (a second start on the
// same data directory). Facts are loaded by the `demo` command into DIR/<N> (or a temporary
// directory) unless an earlier run left them there.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { type Cairn, startCairn } from '../apps/server/cairn.ts';
import { ROLLUPS } from '../libs/analytics/sources/rollups.ts';
import type { Scope } from '../libs/auth/principal.ts';
import { issueToken } from '../libs/auth/token.service.ts';
import { loadConfig } from '../libs/config/config.ts';
import { DEMO_FACT_ID_BASE } from '../libs/demo/fact-generator.ts';
import { readProjection } from '../libs/projection/projection-freshness.ts';
import { type DashboardFigures, refreshDashboards } from './dashboard-refresh.ts';
import { httpCall } from './http-call.ts';
import { numberOption, textOption } from './options.ts';
import { percentile } from './percentile.ts';
import { QUERIES } from './query.bench.ts';
import { startTaskWriter, type WriterFigures } from './task-writer.ts';

/** The businesses `demo` generates by default. */
const BUSINESSES = Array.from({ length: 20 }, (_, i) => `biz-${i}`);
/** The writer's: biz-3 is the one the single-business dashboard queries read. */
const WRITER_BUSINESSES = ['biz-3', 'biz-7'];

interface Settings {
  facts: number;
  dashboards: number;
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
      `${QUERIES.length} queries every ${settings.intervalMs} ms for ${settings.seconds} s, ` +
      `writer ${settings.writesPerSecond} writes/s\n`,
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
    const readTokens: string[] = [];
    for (let i = 0; i < settings.dashboards; i++) {
      readTokens.push(await issue(`refresh bench dashboard ${i}`, ['analytics:read'], BUSINESSES));
    }
    const writeToken = await issue(
      'refresh bench writer',
      ['workflows:read', 'workflows:write'],
      WRITER_BUSINESSES,
    );
    const outcomes: Outcome[] = [];
    for (const phase of ['no writes', 'with writes'] as const) {
      // Each phase starts with every earlier write projected: none moves the watermark in a
      // phase without writes.
      await drainProjection(cairn);
      const before = await statementsRun(cairn.url);
      const unhandledBefore = unhandledRejections.length;
      const writer =
        phase === 'with writes'
          ? startTaskWriter({
              url: cairn.url,
              token: writeToken,
              businesses: WRITER_BUSINESSES,
              perSecond: settings.writesPerSecond,
            })
          : undefined;
      // The writer stops when the dashboards' last refresh is due, not when it is answered.
      const written = writer && sleep(settings.seconds * 1000).then(() => writer.stop());
      const dashboards = await refreshDashboards({
        url: cairn.url,
        tokens: readTokens,
        queries: QUERIES.map(([, request]) => request),
        intervalMs: settings.intervalMs,
        seconds: settings.seconds,
        seed: settings.seed,
      });
      const statements = (await statementsRun(cairn.url)) - before;
      const outcome: Outcome = {
        phase,
        cache,
        dashboards,
        statementsPerCycle: statements / cycles(settings),
        writer: await written,
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

/** Waits until the projector has nothing left in the outbox. */
async function drainProjection(cairn: Cairn): Promise<void> {
  const deadline = Date.now() + 300_000;
  while ((await readProjection(cairn.engines.postgres.db)).oldest !== null) {
    if (Date.now() > deadline) throw new Error('the projector did not catch up within 5 minutes');
    await sleep(100);
  }
}

/** `cairn_analytics_engine_statements_total` as /metrics has it now. */
async function statementsRun(url: string): Promise<number> {
  const agent = new http.Agent();
  const answer = await httpCall(agent, 'GET', `${url}/metrics`, {});
  agent.destroy();
  const line = /^cairn_analytics_engine_statements_total(?:\{[^}]*\})? (\S+)$/m.exec(answer.body);
  if (!line) throw new Error('/metrics has no cairn_analytics_engine_statements_total');
  return Number(line[1]);
}

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
    `${outcome.statementsPerCycle.toFixed(1)} engine statements per cycle (${QUERIES.length} distinct queries), ` +
    `answer p50 ${f.answerP50.toFixed(2)} ms p99 ${f.answerP99.toFixed(2)} ms, ` +
    `refresh p50 ${f.refreshP50.toFixed(2)} ms p99 ${f.refreshP99.toFixed(2)} ms${failures}${writes}${defects}`
  );
}

function printSummary(outcomes: Outcome[], settings: Settings): void {
  const rows = outcomes.map((outcome) => {
    const f = figuresOf(outcome);
    return `| ${outcome.phase} | ${outcome.cache} | ${outcome.dashboards.refreshes} | ${f.hits.toFixed(1)} | ${f.coalesced.toFixed(1)} | ${outcome.statementsPerCycle.toFixed(1)} | ${QUERIES.length} | ${f.answerP50.toFixed(2)} | ${f.answerP99.toFixed(2)} | ${f.refreshP50.toFixed(2)} | ${f.refreshP99.toFixed(2)} | ${outcome.writer ? f.writesPerSecond.toFixed(1) : '–'} |`;
  });
  process.stdout.write(
    `\n${settings.facts.toLocaleString('en-US')} facts; hits, coalesced and latencies after each dashboard's first refresh; statements per ${settings.intervalMs} ms cycle over the whole phase\n\n| phase | cache | refreshes | hits % | coalesced % | engine statements / cycle | distinct queries | answer p50 ms | answer p99 ms | refresh p50 ms | refresh p99 ms | writes/s |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n${rows.join('\n')}\n`,
  );
  const find = (phase: Outcome['phase'], cache: Outcome['cache']) => {
    const outcome = outcomes.find((o) => o.phase === phase && o.cache === cache);
    return outcome && { ...figuresOf(outcome), statementsPerCycle: outcome.statementsPerCycle };
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
      `- with writes, cache on: engine statements per cycle ${busy.statementsPerCycle.toFixed(1)} ≤ ${QUERIES.length} distinct queries: ${check(busy.statementsPerCycle <= QUERIES.length)}`,
      `- with writes: refresh p99 cache on ${busy.refreshP99.toFixed(2)} ms ≤ refresh p50 cache off ${busyOff.refreshP50.toFixed(2)} ms: ${check(busy.refreshP99 <= busyOff.refreshP50)}`,
      '',
    ].join('\n'),
  );
}
