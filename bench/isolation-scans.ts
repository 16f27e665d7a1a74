// Four tokens each keep a facts scan in flight while another tenant asks its cheap query: where
// a cheap statement stands among long ones waiting for the one embedded engine.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startCairn } from '../apps/server/cairn.ts';
import { generateFacts } from '../libs/demo/fact-generator.ts';
import { benchConfig, benchReader } from './bench-reader.ts';
import { percentile } from './percentile.ts';

const SCANNING = ['biz-0', 'biz-1', 'biz-2', 'biz-3'];
const OTHER = 'biz-4';
/** Filtered by assignee, which no rollup keeping blocked changes has: read from facts. */
const SCAN = {
  metrics: ['blocked_tasks', 'open_tasks'],
  include: ['totals'],
  filters: [{ dimension: 'assignee', op: 'neq', values: ['nobody'] }],
};
const CHEAP = { metrics: ['tasks_created'], business: OTHER, period: 'last_30_days' };

export interface ScansBeside {
  idle: number[];
  busy: number[];
  /** Facts scans answered meanwhile, and the source they were read from. */
  scans: number;
  scanSources: string[];
  cheapSource: string;
}

export async function measureScansBeside(options: {
  facts: number;
  probes: number;
}): Promise<ScansBeside> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-bench-'));
  const config = benchConfig(dataDir, { CAIRN_QUERY_TIMEOUT_MS: '60000' });
  const cairn = await startCairn({ config, rateLimits: { service_account: 1e9, user: 1e9 } });
  let stop = false;
  const loops: Promise<void>[] = [];
  try {
    const ch = cairn.engines.clickhouse.client;
    await generateFacts(ch, { facts: options.facts, seed: 5, now: new Date(), businesses: 5 });
    const issue = async (businesses: string[]) =>
      `Bearer ${(await benchReader(cairn, config, businesses)).token}`;
    const ask = async (authorization: string, body: unknown) => {
      const started = performance.now();
      const res = await fetch(`${cairn.url}/api/v1/query`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json', 'cache-control': 'no-cache' },
        body: JSON.stringify(body),
      });
      const answer = (await res.json()) as { metadata?: { source?: string } };
      if (res.status !== 200) throw new Error(`a query answered ${res.status}`);
      return { ms: performance.now() - started, source: answer.metadata?.source ?? '?' };
    };
    const other = await issue([OTHER]);
    const cheapSource = (await ask(other, CHEAP)).source;
    const probes = async () => {
      const times: number[] = [];
      for (let i = 0; i < options.probes; i++) times.push((await ask(other, CHEAP)).ms);
      return times;
    };
    const idle = await probes();
    let scans = 0;
    const scanSources = new Set<string>();
    for (const business of SCANNING) {
      const authorization = await issue([business]);
      loops.push(
        (async () => {
          while (!stop) {
            scanSources.add((await ask(authorization, { ...SCAN, business })).source);
            scans++;
          }
        })(),
      );
    }
    // Every scanning token has a query on the engine or waiting for it.
    while (cairn.queryAdmission.state.running < SCANNING.length) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const busy = await probes();
    return { idle, busy, scans, scanSources: [...scanSources], cheapSource };
  } finally {
    stop = true;
    await Promise.allSettled(loops);
    await cairn.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

/** The line the isolation bench prints. */
export function scansLine(result: ScansBeside, facts: number): string {
  const idle = percentile(result.idle, 0.99);
  const busy = percentile(result.busy, 0.99);
  return [
    `facts scans: 4 tokens each with a scan of ${facts} facts in flight (${result.scans} answered, read from ${result.scanSources.join(', ')});`,
    `another tenant's cheap query (${result.cheapSource}) p99 ${busy.toFixed(0)} ms, median ${percentile(result.busy, 0.5).toFixed(0)} ms`,
    `vs ${idle.toFixed(0)} ms idle (${(busy / idle).toFixed(2)}x)`,
  ].join(' ');
}
