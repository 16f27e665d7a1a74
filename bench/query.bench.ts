// `npm run bench -- query [--facts 1000000,10000000] [--requests 30] [--facts-requests 5]
//   [--data-root DIR]`: loads N generated facts into embedded ClickHouse (or reuses
// DIR/<N> from an earlier run: 100M facts take many minutes to load), then times
// representative queries in turns, in the same run: the service over HTTP (result cache
// bypassed), the statement the service ran called directly on the engine with the settings it
// ran with, and the same query forced onto facts, also straight on the engine.
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startCairn } from '../apps/server/cairn.ts';
import { DIMENSIONS, type DimensionName } from '../libs/analytics/catalog/catalog.ts';
import { runOnEngine } from '../libs/analytics/execute/query-execution.ts';
import type { QueryRequest } from '../libs/analytics/parse/query-parser.ts';
import { type AnalyticsDeps, prepareQuery } from '../libs/analytics/query.service.ts';
import type { SourceName } from '../libs/analytics/sources/rollups.ts';
import { loadBenchFacts } from './bench-facts.ts';
import { benchConfig, benchReader } from './bench-reader.ts';
import { httpCall } from './http-call.ts';
import { textOption } from './options.ts';
import { percentile } from './percentile.ts';

const BUSINESSES = Array.from({ length: 20 }, (_, i) => `biz-${i}`);
/** Hourly buckets where the catalog has them; days otherwise. */
const HOURLY = ('hour' in DIMENSIONS ? 'hour' : 'day') as DimensionName;

export const QUERIES: Array<[string, QueryRequest]> = [
  [
    'created by day, 30 d, 1 biz',
    { metrics: ['tasks_created'], dimensions: ['day'], business: 'biz-3' },
  ],
  [
    'open + overdue by assignee, 1 biz',
    { metrics: ['open_tasks', 'overdue_tasks'], dimensions: ['assignee'], business: 'biz-3' },
  ],
  ['open by month, year', { metrics: ['open_tasks'], dimensions: ['month'], period: 'this_year' }],
  [
    'created, completed, open by month, year',
    {
      metrics: ['tasks_created', 'tasks_completed', 'open_tasks'],
      dimensions: ['month'],
      period: 'this_year',
    },
  ],
  [
    'completion + p90 by project, 90 d',
    {
      metrics: ['completion_rate', 'p90_cycle_time_hours'],
      dimensions: ['project'],
      period: 'last_90_days',
    },
  ],
  [
    'blocked + open by week, 90 d, 1 biz',
    {
      metrics: ['blocked_tasks', 'open_tasks'],
      dimensions: ['week'],
      period: 'last_90_days',
      business: 'biz-3',
    },
  ],
  [
    'blocked + open + completion by week, 90 d, Asia/Tokyo',
    {
      metrics: ['blocked_tasks', 'open_tasks', 'completion_rate'],
      dimensions: ['week'],
      period: 'last_90_days',
      timezone: 'Asia/Tokyo',
    },
  ],
  [
    'p85 work time, blocked hours, flow efficiency by week, 90 d',
    {
      metrics: ['p85_work_time_hours', 'avg_blocked_hours', 'flow_efficiency'],
      dimensions: ['week'],
      period: 'last_90_days',
    },
  ],
  [
    'cumulative flow: tasks in each status by week, 90 d',
    {
      metrics: ['tasks_in_status'],
      dimensions: ['week', 'status'],
      period: 'last_90_days',
    },
  ],
  [
    'age of open work by week, 90 d, 1 biz',
    {
      metrics: ['avg_age_hours', 'p85_age_hours'],
      dimensions: ['week'],
      period: 'last_90_days',
      business: 'biz-3',
    },
  ],
  [
    `created by ${HOURLY}, today, Asia/Kolkata`,
    {
      metrics: ['tasks_created'],
      dimensions: [HOURLY],
      period: 'today',
      timezone: 'Asia/Kolkata',
    },
  ],
];

const NOT_ABORTED = new AbortController().signal;
const engineLimits = (deps: AnalyticsDeps) => ({
  timeoutMs: deps.timeoutMs,
  maxMemoryBytes: deps.maxMemoryBytes,
});

export async function run(args: string[]): Promise<void> {
  const sizes = textOption(args, 'facts', '1000000,10000000').split(',').map(Number);
  const requests = Number(textOption(args, 'requests', '30'));
  const factsRequests = Number(textOption(args, 'facts-requests', '5'));
  const root = textOption(args, 'data-root', '');
  const rows: string[] = [];
  const cacheRows: string[] = [];
  process.stdout.write(
    `query benchmark on ${os.cpus().length} CPUs, Node ${process.version}, embedded chDB\n`,
  );
  for (const facts of sizes) {
    const dataDir = root
      ? path.join(root, String(facts))
      : await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-bench-'));
    const config = benchConfig(dataDir);
    const cairn = await startCairn({ config });
    try {
      await loadBenchFacts(cairn, dataDir, facts);
      const { token, deps } = await benchReader(cairn, config, BUSINESSES);
      for (const [name, request] of QUERIES) {
        const t = await timeAll(deps, cairn.url, token, request, requests, factsRequests);
        const target = 1.15 * t.engine.p50 + 3;
        const onFacts = t.factsRefused
          ? `refused (${t.factsRefused}) | —`
          : `${t.onFacts.p50.toFixed(1)} | ${(t.onFacts.p50 / t.service.p50).toFixed(1)}×`;
        rows.push(
          `| ${facts.toLocaleString('en-US')} | ${name} | ${t.source} | ${t.service.p50.toFixed(1)} | ${t.service.p99.toFixed(1)} | ${t.engine.p50.toFixed(1)} | ${onFacts} | ${t.rowsRead.toLocaleString('en-US')} | ${t.service.p50 <= target ? 'yes' : 'no'} |`,
        );
        process.stdout.write(`${rows.at(-1)}\n`);
      }
      const [hitName, hitRequest] = QUERIES[0] as [string, QueryRequest];
      // Enough hits that p99 is not simply the slowest of a few.
      const hit = await timeCacheHits(deps, cairn.url, token, hitRequest, Math.max(requests, 200));
      cacheRows.push(
        `| ${facts.toLocaleString('en-US')} | ${hitName} | ${hit.p50.toFixed(2)} | ${hit.p99.toFixed(2)} | ${hit.burstP50.toFixed(2)} | ${hit.burstP99.toFixed(2)} | ${hit.engineP50.toFixed(1)} | ${hit.p50 <= 1 && hit.p99 <= 3 ? 'yes' : 'no'} | ${hit.burstP50 <= 1 && hit.burstP99 <= 3 ? 'yes' : 'no'} |`,
      );
      process.stdout.write(`${cacheRows.at(-1)}\n`);
    } finally {
      await cairn.close();
      if (!root) await fs.rm(dataDir, { recursive: true, force: true });
    }
  }
  process.stdout.write(
    `\n| facts | query | source | service p50 ms | service p99 ms | engine p50 ms | on facts p50 ms | facts ÷ service | rows read | p50 ≤ 1.15×engine+3 |\n|---|---|---|---|---|---|---|---|---|---|\n${rows.join('\n')}\n`,
  );
  process.stdout.write(
    `\n| facts | query | hit p50 ms, in turns | hit p99 ms, in turns | hit p50 ms, back to back | hit p99 ms, back to back | engine p50 ms | in turns p50 ≤ 1, p99 ≤ 3 ms | back to back p50 ≤ 1, p99 ≤ 3 ms |\n|---|---|---|---|---|---|---|---|---|\n${cacheRows.join('\n')}\n`,
  );
}

/**
 * Result-cache hits: the query again over HTTP without `no-cache`, in turns with the same
 * statement straight on the engine, then in a back-to-back burst. The first request fills the
 * cache and no facts arrive meanwhile, so every later answer must say "hit": a miss cannot pass
 * for a fast hit.
 */
async function timeCacheHits(
  deps: AnalyticsDeps,
  url: string,
  token: string,
  request: QueryRequest,
  times: number,
) {
  const { compiled } = await prepareQuery(deps, request, BUSINESSES, new Date());
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  /** Times one request; past the first (which fills the cache) it must be answered as a hit. */
  const ask = async (mustHit: boolean) => {
    const started = performance.now();
    const response = await httpCall(
      agent,
      'POST',
      `${url}/api/v1/query`,
      headers,
      JSON.stringify(request),
    );
    const ms = performance.now() - started;
    const cache = JSON.parse(response.body).metadata?.cache;
    if (mustHit && cache !== 'hit') {
      throw new Error(`expected a cache hit, the service said ${cache}`);
    }
    return ms;
  };
  const hits: number[] = [];
  const engine: number[] = [];
  for (let round = 0; round < times + 2; round++) {
    const started = performance.now();
    await runOnEngine(deps.clickhouse, compiled, engineLimits(deps), NOT_ABORTED);
    const engineMs = performance.now() - started;
    const hitMs = await ask(round > 0);
    if (round < 2) continue;
    hits.push(hitMs);
    engine.push(engineMs);
  }
  // Then back to back, as a dashboard's panels arrive together: no engine work in between, so
  // the process runs warm rather than after an idle wait of the engine's length.
  const burst: number[] = [];
  for (let round = 0; round < times; round++) burst.push(await ask(true));
  agent.destroy();
  return {
    p50: percentile(hits, 0.5),
    p99: percentile(hits, 0.99),
    burstP50: percentile(burst, 0.5),
    burstP99: percentile(burst, 0.99),
    engineP50: percentile(engine, 0.5),
  };
}

/**
 * Samples taken in turn, one of each per round, so a noisy neighbour or a background merge
 * weighs on all alike. The engine gets the statement the service would run, with its settings,
 * straight from the client: no HTTP, no Postgres; "on facts" gets the same query compiled for
 * facts (fewer rounds: at 100M facts one can take seconds). The service is called over HTTP on
 * one kept-alive connection with the result cache bypassed: chDB runs one statement at a time,
 * so concurrency would only queue. The client is node:http rather than fetch, whose own
 * overhead (about a millisecond here, on the event loop the service shares) is not the
 * service's.
 */
async function timeAll(
  deps: AnalyticsDeps,
  url: string,
  token: string,
  request: QueryRequest,
  times: number,
  factsTimes: number,
) {
  const planned = await prepareQuery(deps, request, BUSINESSES, new Date());
  const onFacts = await prepareQuery(deps, request, BUSINESSES, new Date(), { force: 'facts' });
  const samples = { engine: [] as number[], service: [] as number[], onFacts: [] as number[] };
  const body = JSON.stringify(request);
  const headers = {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    'cache-control': 'no-cache',
  };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  // The service's own engine call, with the settings it sends: on one chDB session a statement
  // with other settings would make the next one set them back, a cost neither pays alone.
  const engineRun = async (statement: typeof planned.compiled) => {
    const started = performance.now();
    await runOnEngine(deps.clickhouse, statement, engineLimits(deps), NOT_ABORTED);
    return performance.now() - started;
  };
  let answer: { metadata?: { source?: SourceName; rows_read?: number } } = {};
  let factsRefused: string | null = null;
  for (let round = 0; round < times + 2; round++) {
    const engineMs = await engineRun(planned.compiled);
    const started = performance.now();
    const response = await httpCall(agent, 'POST', `${url}/api/v1/query`, headers, body);
    if (response.status !== 200) throw new Error(`The service answered ${response.status}`);
    const serviceMs = performance.now() - started;
    answer = JSON.parse(response.body);
    // The first rounds warm caches and connections on every side.
    if (round < 2) continue;
    samples.engine.push(engineMs);
    samples.service.push(serviceMs);
    if (round - 2 < factsTimes && !factsRefused) {
      // On facts, state in a zone off UTC replays every task's history: at 10M facts it can
      // outgrow the query memory cap, which is what the rollup is for. Said, not timed.
      try {
        samples.onFacts.push(await engineRun(onFacts.compiled));
      } catch (error) {
        factsRefused = (error as { code?: string }).code ?? String(error);
      }
    }
  }
  agent.destroy();
  const summary = (values: number[]) => ({
    p50: percentile(values, 0.5),
    p99: percentile(values, 0.99),
  });
  return {
    source: answer.metadata?.source ?? planned.source,
    rowsRead: Number(answer.metadata?.rows_read ?? 0),
    engine: summary(samples.engine),
    service: summary(samples.service),
    onFacts: summary(samples.onFacts),
    factsRefused,
  };
}
