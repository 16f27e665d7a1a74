// `npm run bench -- keep-alive [--requests 100000] [--connections 64] [--slow-sockets 1100]
//   [--slow-addresses 20] [--facts 20000] [--pipelining 1]`
// A keep-alive pool of `connections` sockets from 127.0.0.1 (undici's Pool, as a dashboard
// server keeps one) sends `requests` requests: health checks, task lists, queries (POST and
// GET), a CSV export, /openapi.json and the docs' 1.5 MB script bundle, while `slow-sockets`
// slow-header sockets spread over `slow-addresses` other loopback addresses hold the server at
// its connection cap (default limits: 1,000 in all, 100 per address), so that the pool's
// address holds the most connections. It prints how many requests got no answer (resets,
// connections closed under them): the target is 0. The service runs on embedded engines in a
// child process, so load and server share no event loop.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startCairn } from '../apps/server/cairn.ts';
import { keepAliveLoad } from '../dev-tools/keep-alive-load.ts';
import { loopbackAddresses } from '../dev-tools/slow-sockets.ts';
import { generateFacts } from '../libs/demo/fact-generator.ts';
import { benchConfig } from './bench-reader.ts';
import { numberOption } from './options.ts';
import { serveChild } from './serve-child.ts';

const BUSINESS = 'biz-0';

export async function run(args: string[]): Promise<void> {
  if (args[0] === '--serve') return serve(args.slice(1));
  const requests = numberOption(args, 'requests', 100_000);
  const connections = numberOption(args, 'connections', 64);
  const slowSockets = numberOption(args, 'slow-sockets', 1_100);
  const slowAddresses = numberOption(args, 'slow-addresses', 20);
  const facts = numberOption(args, 'facts', 20_000);
  const pipelining = numberOption(args, 'pipelining', 1);
  const masterKey = randomBytes(32).toString('base64url');
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-keep-alive-'));
  const { child, url } = await serveChild('keep-alive', [dataDir, masterKey, String(facts)]);
  try {
    const issued = await fetch(`${url}/api/v1/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'dashboard',
        scopes: ['analytics:read', 'workflows:read'],
        businesses: [BUSINESS],
        kind: 'service_account',
      }),
    });
    if (issued.status !== 201) throw new Error(`token: ${issued.status} ${await issued.text()}`);
    const { data } = (await issued.json()) as { data: { token: string } };
    const load = await keepAliveLoad({
      url,
      authorization: `Bearer ${data.token}`,
      business: BUSINESS,
      connections,
      pipelining,
      requests,
      slow: { sockets: slowSockets, addresses: loopbackAddresses(slowAddresses) },
    });
    const rate = load.requests / load.seconds;
    process.stdout.write(
      [
        `keep-alive pool: ${connections} sockets from 127.0.0.1 (${pipelining} request(s) each at once), ${load.requests} requests in ${load.seconds.toFixed(1)} s (${rate.toFixed(0)}/s, ${(load.bytes / 1024 ** 3).toFixed(2)} GiB read)`,
        `  kinds ${JSON.stringify(load.kinds)}`,
        `  answers ${JSON.stringify(load.statuses)}${Object.keys(load.refusals).length ? `, refusals ${JSON.stringify(load.refusals)} ${JSON.stringify(load.refused)}` : ''}`,
        `  pool connections opened ${load.poolConnects}, ended under it ${JSON.stringify(load.poolDisconnects)}`,
        `  beside ${slowSockets} slow-header sockets from ${slowAddresses} addresses (${load.slowConnects} connections opened, re-openings included)`,
        `  requests without an answer: ${load.failed}${load.failed ? ` ${JSON.stringify(load.failures)}` : ''} (target 0)`,
        '',
      ].join('\n'),
    );
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

/** The child: one Cairn on embedded engines with the default HTTP limits and a year of facts. */
async function serve([dataDir, masterKey, facts]: string[]): Promise<void> {
  const config = benchConfig(dataDir as string, {
    HOST: '127.0.0.1',
    CAIRN_MASTER_KEY: masterKey as string,
    // Every lane of the pool may wait for a query or export at once: one token runs 2 queries
    // at a time by default and refuses a ninth waiting one with 429, as it does a third export.
    CAIRN_QUERY_QUEUE_PER_PRINCIPAL: '1000',
    CAIRN_EXPORT_CONCURRENCY_PER_PRINCIPAL: '1000',
  });
  const cairn = await startCairn({
    config,
    rateLimits: { anonymous: 1e9, user: 1e9, service_account: 1e9 },
  });
  await generateFacts(cairn.engines.clickhouse.client, {
    facts: Number(facts),
    seed: 5,
    now: new Date(),
    businesses: 1,
  });
  process.stdout.write(`listening ${cairn.url}\n`);
  await new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
  await cairn.close();
}
