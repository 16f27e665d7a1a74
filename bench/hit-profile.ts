// Where a result-cache hit's time goes: a started Cairn on a small dataset answers one query
// again and again over one kept-alive connection; run under `node --cpu-prof` to see it.
import fs from 'node:fs/promises';
import http from 'node:http';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { startCairn } from '../apps/server/cairn.ts';
import { loadBenchFacts } from './bench-facts.ts';
import { benchConfig, benchReader } from './bench-reader.ts';
import { httpCall } from './http-call.ts';
import { percentile } from './percentile.ts';

const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-hit-'));
const config = benchConfig(dataDir);
const cairn = await startCairn({ config });
await loadBenchFacts(cairn, dataDir, 100_000);
const { token } = await benchReader(
  cairn,
  config,
  Array.from({ length: 20 }, (_, i) => `biz-${i}`),
);
const body = JSON.stringify({ metrics: ['tasks_created'], dimensions: ['day'], business: 'biz-3' });
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const url = `${cairn.url}/api/v1/query`;
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
const ask = async () => {
  const started = performance.now();
  const answer = await httpCall(agent, 'POST', url, headers, body);
  return { ms: performance.now() - started, cache: JSON.parse(answer.body).metadata?.cache };
};
await ask();
// Only the hits: `PROFILE=file` writes their CPU profile there.
const session = process.env.PROFILE ? new Session() : undefined;
session?.connect();
await session?.post('Profiler.enable');
await session?.post('Profiler.start');
const times: number[] = [];
for (let i = 0; i < Number(process.env.HITS ?? 3000); i++) {
  const { ms, cache } = await ask();
  if (cache !== 'hit') throw new Error(`not a hit: ${cache}`);
  times.push(ms);
}
if (session) {
  const { profile } = await session.post('Profiler.stop');
  await fs.writeFile(process.env.PROFILE as string, JSON.stringify(profile));
}
console.log(
  `hits ${times.length}: p50 ${percentile(times, 0.5).toFixed(3)} ms, p99 ${percentile(times, 0.99).toFixed(3)} ms`,
);
agent.destroy();
await cairn.close();
await fs.rm(dataDir, { recursive: true, force: true });
