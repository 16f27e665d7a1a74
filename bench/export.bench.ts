// `npm run bench -- export [--rows 1000000] [--facts 3000000] [--runs 3] [--data-root DIR]`:
// loads generated facts into embedded ClickHouse (or reuses DIR/<facts>), then exports a
// breakdown of about `rows` rows as CSV over HTTP, in turns with the same statement written as
// CSV by the engine itself, and prints the two side by side with the process's RSS growth
// during the export. Targets: export ≤ 1.5× the engine's CSV, growth ≤ 64 MiB.
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startCairn } from '../apps/server/cairn.ts';
import type { QueryRequest } from '../libs/analytics/parse/query-parser.ts';
import { type AnalyticsDeps, prepareQuery } from '../libs/analytics/query.service.ts';
import { generateFacts } from '../libs/demo/fact-generator.ts';
import { benchConfig, benchReader } from './bench-reader.ts';
import { numberOption, textOption } from './options.ts';

const BUSINESSES = Array.from({ length: 20 }, (_, i) => `biz-${i}`);
/** Many small groups: a row per business, day, assignee and project that had a change. */
const QUERY: QueryRequest = {
  metrics: ['tasks_created', 'tasks_completed'],
  dimensions: ['business', 'day', 'assignee', 'project'],
  period: 'all_time',
};
const MIB = 1024 * 1024;

export async function run(args: string[]): Promise<void> {
  const rows = numberOption(args, 'rows', 1_000_000);
  const facts = numberOption(args, 'facts', 3_000_000);
  const runs = numberOption(args, 'runs', 3);
  const root = textOption(args, 'data-root', '');
  const dataDir = root
    ? path.join(root, String(facts))
    : await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-bench-'));
  const config = benchConfig(dataDir, { CAIRN_EXPORT_MAX_ROWS: String(rows) });
  const cairn = await startCairn({ config });
  try {
    const ch = cairn.engines.clickhouse.client;
    const count = await ch.query({
      query: 'SELECT count() AS n FROM facts',
      format: 'JSONEachRow',
    });
    const [loaded] = await count.json<{ n: number | string }>();
    if (Number(loaded?.n ?? 0) === 0) {
      process.stdout.write(`loading ${facts.toLocaleString('en-US')} facts…\n`);
      await generateFacts(ch, { facts, seed: 1, now: new Date(), businesses: BUSINESSES.length });
      await ch.command({ query: 'OPTIMIZE TABLE facts FINAL' });
    }
    const reader = await benchReader(cairn, config, BUSINESSES);
    const { token } = reader;
    const deps: AnalyticsDeps = { ...reader.deps, maxRows: rows };
    // The statement the export runs (its row limit the cap, one past it to tell a cut).
    const { rows: statement } = await prepareQuery(
      { ...deps, maxRows: rows + 1 },
      QUERY,
      BUSINESSES,
      new Date(),
    );
    /** Runs `work`, sampling the process's RSS: the engine is in this process on chDB. */
    const sampled = async <T>(work: () => Promise<T>) => {
      global.gc?.();
      const before = process.memoryUsage().rss;
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss);
      }, 5);
      const started = performance.now();
      try {
        const out = await work();
        return { ...out, ms: performance.now() - started, growth: peak - before };
      } finally {
        clearInterval(sampler);
      }
    };
    const engineCsv = () =>
      sampled(async () => {
        const result = await ch.query({
          query: statement.sql,
          query_params: statement.params,
          format: 'CSVWithNames',
        });
        let bytes = 0;
        for await (const chunk of result.stream()) {
          for (const row of chunk) bytes += row.text.length + 1;
        }
        return { bytes };
      });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const exported = () => sampled(() => postCsv(agent, `${cairn.url}/api/v1/query/export`, token));
    await engineCsv(); // warm the engine's caches for both
    process.stdout.write(
      '\n| run | rows | engine CSV ms | export ms | export ÷ engine | engine CSV RSS growth MiB | export RSS growth MiB | ≤ 1.5× | ≤ 64 MiB | Cairn-Warnings |\n|---|---|---|---|---|---|---|---|---|---|\n',
    );
    for (let i = 1; i <= runs; i++) {
      const engine = await engineCsv();
      const out = await exported();
      const ratio = out.ms / engine.ms;
      process.stdout.write(
        `| ${i} | ${(out.lines - 1).toLocaleString('en-US')} | ${engine.ms.toFixed(0)} | ${out.ms.toFixed(0)} | ${ratio.toFixed(2)}× | ${(engine.growth / MIB).toFixed(1)} | ${(out.growth / MIB).toFixed(1)} | ${ratio <= 1.5 ? 'yes' : 'no'} | ${out.growth <= 64 * MIB ? 'yes' : 'no'} | ${out.warnings || '–'} |\n`,
      );
    }
    agent.destroy();
  } finally {
    await cairn.close();
    if (!root) await fs.rm(dataDir, { recursive: true, force: true });
  }
}

/** Posts the export and reads it as it comes, counting lines and keeping none of it. */
function postCsv(
  agent: http.Agent,
  url: string,
  token: string,
): Promise<{ bytes: number; lines: number; warnings: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      agent,
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'text/csv',
        'cache-control': 'no-cache',
      },
    });
    req.on('response', (res) => {
      if (res.statusCode !== 200) reject(new Error(`export answered ${res.statusCode}`));
      let bytes = 0;
      let lines = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) lines++;
      });
      res.on('end', () =>
        resolve({ bytes, lines, warnings: String(res.headers['cairn-warnings'] ?? '') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(QUERY));
  });
}
