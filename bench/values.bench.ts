// `npm run bench -- values [--facts 10000000] [--requests 30] [--facts-requests 10]
//   [--data-root DIR] [--timezone Asia/Kathmandu]`: loads N generated facts as the query
// benchmark does (or reuses DIR/<N>), then times type-ahead lookups: first a word typed one
// keystroke at a time (each a new prefix, the result cache on), then in turns the service over
// HTTP (result cache bypassed), the statement it ran straight on the engine, and the same
// lookup compiled for raw facts on the engine; then a repeat answered from the result cache.
// `--timezone` reads every lookup with a period in that zone (default: one in Asia/Kolkata).
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startCairn } from '../apps/server/cairn.ts';
import { compileValues } from '../libs/analytics/compile/values-compiler.ts';
import { runOnEngine } from '../libs/analytics/execute/query-execution.ts';
import { type PeriodName, resolvePeriod } from '../libs/analytics/period/period.ts';
import type { AnalyticsDeps } from '../libs/analytics/query.service.ts';
import type { ValueDimension } from '../libs/analytics/values/dimension-values.schemas.ts';
import { compileValueList } from '../libs/analytics/values/values-list.ts';
import { valueSources } from '../libs/analytics/values/values-source.ts';
import { loadBenchFacts } from './bench-facts.ts';
import { benchConfig, benchReader } from './bench-reader.ts';
import { httpCall } from './http-call.ts';
import { textOption } from './options.ts';
import { percentile } from './percentile.ts';

const BUSINESSES = Array.from({ length: 20 }, (_, i) => `biz-${i}`);
const BUSINESS = 'biz-3';

interface Lookup {
  dimension: ValueDimension;
  prefix: string;
  period?: PeriodName;
  timezone?: string;
}

const LOOKUPS: Array<[string, Lookup]> = [
  ['project, all time', { dimension: 'project', prefix: '' }],
  ['assignee "user-1", all time', { dimension: 'assignee', prefix: 'user-1' }],
  ['assignee "User-2", 30 d', { dimension: 'assignee', prefix: 'User-2', period: 'last_30_days' }],
  ['project, 90 d', { dimension: 'project', prefix: '', period: 'last_90_days' }],
  ['status, this month', { dimension: 'status', prefix: '', period: 'this_month' }],
  [
    'assignee, today, Asia/Kolkata',
    { dimension: 'assignee', prefix: '', period: 'today', timezone: 'Asia/Kolkata' },
  ],
];

/** What a user types into the filter of each dimension, one keystroke at a time. */
const TYPED: Record<ValueDimension, string> = {
  project: 'project-1',
  assignee: 'user-12',
  status: 'comp',
};

const NOT_ABORTED = new AbortController().signal;

/** The lookups, with `timezone` (when given) for every one that has a period. */
function lookups(timezone: string): Array<[string, Lookup]> {
  if (!timezone) return LOOKUPS;
  return LOOKUPS.map(([name, lookup]) =>
    lookup.period === undefined
      ? [name, lookup]
      : [`${name.replace(/, Asia\/Kolkata$/, '')}, ${timezone}`, { ...lookup, timezone }],
  );
}

export async function run(args: string[]): Promise<void> {
  const facts = Number(textOption(args, 'facts', '10000000'));
  const requests = Number(textOption(args, 'requests', '30'));
  const factsRequests = Number(textOption(args, 'facts-requests', '10'));
  const root = textOption(args, 'data-root', '');
  const timezone = textOption(args, 'timezone', '');
  const dataDir = root
    ? path.join(root, String(facts))
    : await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-bench-'));
  const config = benchConfig(dataDir);
  const cairn = await startCairn({ config });
  process.stdout.write(
    `values benchmark on ${os.cpus().length} CPUs, Node ${process.version}, embedded chDB\n`,
  );
  const rows: string[] = [];
  try {
    await loadBenchFacts(cairn, dataDir, facts);
    const { token, deps } = await benchReader(cairn, config, BUSINESSES);
    for (const [name, lookup] of lookups(timezone)) {
      const typed = await typeAhead(cairn.url, token, lookup);
      const t = await timeLookup(deps, cairn.url, token, lookup, requests, factsRequests);
      rows.push(
        `| ${facts.toLocaleString('en-US')} | ${name} | ${t.source} | ${t.values} | ${typed.first.toFixed(1)} | ${typed.p50.toFixed(1)} | ${typed.hits}/${typed.keystrokes} | ${t.service.p50.toFixed(1)} | ${t.service.p99.toFixed(1)} | ${t.engine.toFixed(1)} | ${t.onFacts.toFixed(1)} | ${(t.onFacts / t.service.p50).toFixed(1)}× | ${t.hit.toFixed(2)} |`,
      );
      process.stdout.write(`${rows.at(-1)}\n`);
    }
  } finally {
    await cairn.close();
    if (!root) await fs.rm(dataDir, { recursive: true, force: true });
  }
  process.stdout.write(
    `\n| facts | lookup (limit 20) | source | values | first keystroke ms | later keystrokes p50 ms | keystroke hits | service p50 ms | service p99 ms | engine p50 ms | on facts p50 ms | facts ÷ service | cache hit p50 ms |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n${rows.join('\n')}\n`,
  );
}

/**
 * The lookup's dimension's word typed one keystroke at a time, each a new prefix, with the
 * result cache on, as a type-ahead asks: the first keystroke's time, the later ones' p50 and
 * how many of them the service answered without the engine.
 */
async function typeAhead(url: string, token: string, lookup: Lookup) {
  const word = TYPED[lookup.dimension];
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  let hits = 0;
  for (let length = 0; length <= word.length; length++) {
    const search = new URLSearchParams({
      prefix: word.slice(0, length),
      timezone: lookup.timezone ?? 'UTC',
      ...(lookup.period ? { period: lookup.period } : {}),
    });
    const started = performance.now();
    const answer = await httpCall(
      agent,
      'GET',
      `${url}/api/v1/businesses/${BUSINESS}/dimensions/${lookup.dimension}/values?${search}`,
      { authorization: `Bearer ${token}` },
    );
    times.push(performance.now() - started);
    if (answer.status !== 200) throw new Error(`The service answered ${answer.status}`);
    if (length > 0 && JSON.parse(answer.body).metadata.cache === 'hit') hits += 1;
  }
  agent.destroy();
  return {
    first: times[0] ?? 0,
    p50: percentile(times.slice(1), 0.5),
    hits,
    keystrokes: word.length,
  };
}

/**
 * Samples in turns, one of each per round, so a background merge weighs on all alike: the
 * statement the service runs, straight on the engine with its settings; the service over HTTP
 * on one kept-alive connection with `no-cache`; and (fewer rounds) the lookup on raw facts.
 * Then the same request without `no-cache`, which must come from the result cache.
 */
async function timeLookup(
  deps: AnalyticsDeps,
  url: string,
  token: string,
  lookup: Lookup,
  times: number,
  factsTimes: number,
) {
  const now = new Date();
  const timezone = lookup.timezone ?? 'UTC';
  const period = lookup.period ? resolvePeriod(lookup.period, now, timezone) : null;
  const [source = 'facts'] = valueSources(lookup.dimension, period, deps.rollups(), now);
  const request = { business: BUSINESS, ...lookup, period, limit: 20 };
  // What the service runs: a period only facts answer is listed whole (values-list.ts).
  const planned =
    source === 'facts' && period !== null
      ? compileValueList(request, source)
      : compileValues(request, source);
  const onFacts = compileValues(request, 'facts');
  const search = new URLSearchParams({
    prefix: lookup.prefix,
    timezone,
    ...(lookup.period ? { period: lookup.period } : {}),
  });
  const target = `${url}/api/v1/businesses/${BUSINESS}/dimensions/${lookup.dimension}/values?${search}`;
  const headers = { authorization: `Bearer ${token}` };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const limits = { timeoutMs: deps.timeoutMs, maxMemoryBytes: deps.maxMemoryBytes };
  const onEngine = async (statement: typeof planned) => {
    const started = performance.now();
    await runOnEngine(deps.clickhouse, statement, limits, NOT_ABORTED);
    return performance.now() - started;
  };
  const ask = async (extra: Record<string, string>) => {
    const started = performance.now();
    const answer = await httpCall(agent, 'GET', target, { ...headers, ...extra });
    if (answer.status !== 200) throw new Error(`The service answered ${answer.status}`);
    return { ms: performance.now() - started, body: JSON.parse(answer.body) };
  };
  const samples = { engine: [] as number[], service: [] as number[], onFacts: [] as number[] };
  let answered: { data: unknown[]; metadata: { source: string } } | undefined;
  for (let round = 0; round < times + 2; round++) {
    const engineMs = await onEngine(planned);
    const { ms, body } = await ask({ 'cache-control': 'no-cache' });
    answered = body;
    if (round < 2) continue;
    samples.engine.push(engineMs);
    samples.service.push(ms);
    if (round - 2 < factsTimes) samples.onFacts.push(await onEngine(onFacts));
  }
  await ask({});
  const hits: number[] = [];
  for (let round = 0; round < times; round++) {
    const { ms, body } = await ask({});
    if (body.metadata.cache !== 'hit')
      throw new Error(`expected a hit, got ${body.metadata.cache}`);
    hits.push(ms);
  }
  agent.destroy();
  if (answered?.metadata.source !== source) {
    throw new Error(`the service read ${answered?.metadata.source}, the bench timed ${source}`);
  }
  return {
    source,
    values: answered.data.length,
    service: { p50: percentile(samples.service, 0.5), p99: percentile(samples.service, 0.99) },
    engine: percentile(samples.engine, 0.5),
    onFacts: percentile(samples.onFacts, 0.5),
    hit: percentile(hits, 0.5),
  };
}
