// Eight downloads nobody reads, from four tokens, against another tenant's cheap query: what a
// stalled export holds while its reader sleeps (the engine, admission, anything shared).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startCairn } from '../apps/server/cairn.ts';
import { type StalledDownload, stalledDownload } from '../dev-tools/stalled-download.ts';
import { issueToken } from '../libs/auth/token.service.ts';
import { generateFacts } from '../libs/demo/fact-generator.ts';
import { benchConfig } from './bench-reader.ts';
import { percentile } from './percentile.ts';

const LARGE_TENANTS = ['biz-0', 'biz-1', 'biz-2', 'biz-3'];
const OTHER = 'biz-4';
/** A breakdown of several MiB per business: more than both ends' socket buffers hold. */
const LARGE = {
  metrics: ['tasks_created', 'tasks_completed'],
  dimensions: ['day', 'assignee', 'project', 'status'],
  period: 'all_time',
};
const CHEAP = { metrics: ['tasks_created'], business: OTHER, period: 'last_30_days' };

export interface StalledExports {
  idleP99: number;
  stalledP99: number;
  /** Answers of the other tenant that were not 200, by status. */
  refused: Record<string, number>;
  /** Queries admitted while every download sat unread. */
  admittedWhileStalled: number;
  /** Bytes of each download that had reached its reader. */
  bodyBytes: number[];
}

export async function measureStalledExports(options: {
  facts: number;
  probes: number;
}): Promise<StalledExports> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-bench-'));
  const config = benchConfig(dataDir, { CAIRN_QUERY_TIMEOUT_MS: '60000' });
  const cairn = await startCairn({ config, rateLimits: { service_account: 1e9, user: 1e9 } });
  const stalled: StalledDownload[] = [];
  try {
    const ch = cairn.engines.clickhouse.client;
    await generateFacts(ch, { facts: options.facts, seed: 3, now: new Date(), businesses: 5 });
    const issue = async (businesses: string[]) =>
      `Bearer ${
        (
          await issueToken(
            cairn.engines.postgres.db,
            { name: 'bench', scopes: ['analytics:read'], businesses, kind: 'service_account' },
            new Date(),
          )
        ).token
      }`;
    const other = await issue([OTHER]);
    const probe = async () => {
      const started = performance.now();
      const res = await fetch(`${cairn.url}/api/v1/query`, {
        method: 'POST',
        headers: {
          authorization: other,
          'content-type': 'application/json',
          'cache-control': 'no-cache',
        },
        body: JSON.stringify(CHEAP),
      });
      await res.arrayBuffer();
      return { ms: performance.now() - started, status: res.status };
    };
    const refused: Record<string, number> = {};
    const probes = async () => {
      const times: number[] = [];
      for (let i = 0; i < options.probes; i++) {
        const { ms, status } = await probe();
        times.push(ms);
        if (status !== 200) refused[status] = (refused[status] ?? 0) + 1;
      }
      return percentile(times, 0.99);
    };
    await probe();
    const idleP99 = await probes();
    for (const business of LARGE_TENANTS) {
      const authorization = await issue([business]);
      for (let i = 0; i < 2; i++) {
        stalled.push(
          await stalledDownload(
            cairn.url,
            '/api/v1/query/export',
            { authorization, accept: 'text/csv', 'cache-control': 'no-cache' },
            { ...LARGE, business },
          ),
        );
      }
    }
    const admittedWhileStalled = cairn.queryAdmission.state.running;
    const stalledP99 = await probes();
    return {
      idleP99,
      stalledP99,
      refused,
      admittedWhileStalled,
      bodyBytes: stalled.map((one) => one.read.length),
    };
  } finally {
    for (const one of stalled) one.socket.destroy();
    await cairn.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}
