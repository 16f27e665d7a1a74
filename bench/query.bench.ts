// `npm run bench -- query [--facts 1000000,10000000] [--requests 40]`: loads N generated facts
// into embedded ClickHouse, then times representative queries end to end over HTTP (the
// service) and the same compiled SQL called directly on the engine, in turns, in the same run.
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { SingleBar } from 'cli-progress';
import { startCairn } from '../apps/server/cairn.ts';
import { type AnalyticsDeps, prepareQuery } from '../libs/analytics/query.service.ts';
import type { QueryRequest } from '../libs/analytics/query-parser.ts';
import { issueToken } from '../libs/auth/token.service.ts';
import { loadConfig } from '../libs/config/config.ts';
import { generateFacts } from '../libs/demo/fact-generator.ts';
import { percentile } from './percentile.ts';

const BUSINESSES = Array.from({ length: 20 }, (_, i) => `biz-${i}`);

const QUERIES: Array<[string, QueryRequest]> = [
  [
    'created by day, 30 d, 1 biz',
    { metrics: ['tasks_created'], dimensions: ['day'], business: 'biz-3' },
  ],
  [
    'completion + p90 by project, 90 d',
    {
      metrics: ['tasks_completed', 'completion_rate', 'p90_cycle_time_hours'],
      dimensions: ['project'],
      period: 'last_90_days',
    },
  ],
  [
    'open + overdue by assignee, 1 biz',
    {
      metrics: ['open_tasks', 'overdue_tasks'],
      dimensions: ['assignee'],
      period: 'this_month',
      business: 'biz-3',
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
    'created, completed, open by month, year',
    {
      metrics: ['tasks_created', 'tasks_completed', 'open_tasks'],
      dimensions: ['month'],
      period: 'this_year',
    },
  ],
];

const option = (args: string[], name: string, fallback: string) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 && args[at + 1] ? (args[at + 1] as string) : fallback;
};

export async function run(args: string[]): Promise<void> {
  const sizes = option(args, 'facts', '1000000,10000000').split(',').map(Number);
  const requests = Number(option(args, 'requests', '40'));
  const rows: string[] = [];
  for (const facts of sizes) {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-bench-'));
    const config = loadConfig({
      DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'silent',
      CAIRN_QUERY_TIMEOUT_MS: '600000',
      CAIRN_PROJECTOR_POLL_MS: '60000',
    });
    const cairn = await startCairn({ config });
    try {
      const bar = new SingleBar({ format: `${facts} facts [{bar}] {percentage}% | {duration}s` });
      bar.start(facts, 0);
      await generateFacts(cairn.engines.clickhouse.client, {
        facts,
        seed: 1,
        now: new Date(),
        onProgress: (n) => bar.update(n),
      });
      bar.stop();
      // Time queries on settled parts, not on a table still merging in the background.
      await cairn.engines.clickhouse.client.command({ query: 'OPTIMIZE TABLE facts FINAL' });
      const db = cairn.engines.postgres.db;
      const { token } = await issueToken(
        db,
        {
          name: 'bench',
          scopes: ['analytics:read'],
          businesses: BUSINESSES,
          kind: 'service_account',
        },
        new Date(),
      );
      const deps: AnalyticsDeps = {
        db,
        clickhouse: cairn.engines.clickhouse.client,
        now: () => new Date(),
        maxRows: config.queryMaxRows,
        timeoutMs: config.queryTimeoutMs,
        staleAfterMs: config.staleAfterMs,
      };
      for (const [name, request] of QUERIES) {
        const { engine, service } = await timeBoth(deps, cairn.url, token, request, requests);
        const target = 1.15 * engine.p50 + 3;
        rows.push(
          `| ${facts.toLocaleString('en-US')} | ${name} | ${service.p50.toFixed(1)} | ${service.p99.toFixed(1)} | ${engine.p50.toFixed(1)} | ${engine.p99.toFixed(1)} | ${service.p50 <= target ? 'yes' : 'no'} |`,
        );
        process.stdout.write(`${rows.at(-1)}\n`);
      }
    } finally {
      await cairn.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  }
  process.stdout.write(
    `\n| facts | query | service p50 ms | service p99 ms | engine p50 ms | engine p99 ms | p50 ≤ 1.15×engine+3 |\n|---|---|---|---|---|---|---|\n${rows.join('\n')}\n`,
  );
}

/**
 * Engine and service samples taken in turn, one of each per round, so a noisy neighbour or a
 * background merge weighs on both alike. The engine gets the statement the service would run,
 * straight from the client: no HTTP, no Postgres. The service is called over HTTP on one
 * kept-alive connection: chDB runs one statement at a time, so concurrency would only queue.
 * The client is node:http rather than fetch, whose own overhead (about a millisecond here, on
 * the event loop the service shares) is not the service's.
 */
async function timeBoth(
  deps: AnalyticsDeps,
  url: string,
  token: string,
  request: QueryRequest,
  times: number,
) {
  const { compiled } = await prepareQuery(deps, request, BUSINESSES, new Date());
  const engine: number[] = [];
  const service: number[] = [];
  const body = JSON.stringify(request);
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  for (let round = 0; round < times + 2; round++) {
    let started = performance.now();
    const result = await deps.clickhouse.query({
      query: compiled.sql,
      query_params: compiled.params,
      format: 'JSON',
    });
    await result.json();
    const engineMs = performance.now() - started;
    started = performance.now();
    const status = await post(agent, `${url}/api/v1/query`, headers, body);
    if (status !== 200) throw new Error(`The service answered ${status}`);
    // The first rounds warm caches and connections on both sides.
    if (round >= 2) {
      engine.push(engineMs);
      service.push(performance.now() - started);
    }
  }
  agent.destroy();
  const summary = (samples: number[]) => ({
    p50: percentile(samples, 0.5),
    p99: percentile(samples, 0.99),
  });
  return { engine: summary(engine), service: summary(service) };
}

/** POSTs `body`, reads the whole answer and resolves with its status. */
function post(
  agent: http.Agent,
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', headers, agent }, (response) => {
      response.on('data', () => {});
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}
