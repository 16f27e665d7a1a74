// `npm run bench -- topology [--seconds 20] [--writers 16] [--readers 8] [--rate 50]`
// The deployment shape of dev:cluster (2 api and 2 projector processes on the ClickHouse
// stand-in, the machine's Postgres and Redis): writes/s and query p50/p99 through one api
// replica against two, then the projection's freshness under a steady write rate with the
// projector leader killed (SIGKILL) halfway. Everything shares this machine's cores.
import os from 'node:os';
import { type Cluster, startCluster } from '../dev-tools/cluster/cluster.ts';
import { numberOption } from './options.ts';
import { percentile } from './percentile.ts';

const BUSINESS = 'bench';
const QUERIES = [
  { metrics: ['tasks_created', 'tasks_completed'], dimensions: ['day'], period: 'last_7_days' },
  { metrics: ['open_tasks', 'completion_rate'], dimensions: ['project'], period: 'last_30_days' },
  { metrics: ['tasks_created'], dimensions: ['assignee'], period: 'today' },
];

export async function run(args: string[]): Promise<void> {
  const seconds = numberOption(args, 'seconds', 20);
  const writers = numberOption(args, 'writers', 16);
  const readers = numberOption(args, 'readers', 8);
  const rate = numberOption(args, 'rate', 50);
  process.stdout.write(
    `topology benchmark on ${os.cpus().length} CPUs, Node ${process.version}: 2 api + 2 projector processes, ClickHouse stand-in over chDB, Postgres and Redis servers\n`,
  );
  const cluster = await startCluster({ api: 2, projectors: 2 });
  try {
    // Requests go round a token per loop: one service account's budget (5,000 a minute, shared
    // by the replicas) would otherwise be what is measured.
    const tokens = await Promise.all(
      Array.from({ length: Math.max(writers, readers) }, () => issueToken(cluster)),
    );
    let turn = 0;
    const call = (base: string, method: string, path: string, body?: unknown, extra = {}) =>
      fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${tokens[turn++ % tokens.length]}`,
          'content-type': 'application/json',
          ...extra,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }).then(async (res) => {
        await res.arrayBuffer();
        return res.status;
      });
    const apis = cluster.api.map((one) => one.url);
    process.stdout.write(
      '\n| replicas | writes/s | write p50 ms | write p99 ms | queries/s | query p50 ms | query p99 ms | not 2xx |\n|---|---|---|---|---|---|---|---|\n',
    );
    for (const replicas of [1, 2]) {
      const targets = apis.slice(0, replicas);
      const write = await load(writers, seconds, (i) =>
        call(targets[i % targets.length] as string, 'POST', '/api/v1/tasks', {
          business: BUSINESS,
          name: `task ${i}`,
          project: `p${i % 7}`,
          assignee: `a${i % 5}`,
        }),
      );
      // Reads measured once the writes are projected, not beside the projector's catch-up.
      await caughtUp(cluster);
      const read = await load(readers, seconds, (i) =>
        call(
          targets[i % targets.length] as string,
          'POST',
          '/api/v1/query',
          {
            ...QUERIES[i % QUERIES.length],
            business: BUSINESS,
          },
          { 'cache-control': 'no-cache' },
        ),
      );
      process.stdout.write(
        `| ${replicas} | ${write.rate.toFixed(0)} | ${write.p50.toFixed(1)} | ${write.p99.toFixed(1)} | ${read.rate.toFixed(0)} | ${read.p50.toFixed(1)} | ${read.p99.toFixed(1)} | ${[write.refused, read.refused].filter(Boolean).join(', ') || 0} |\n`,
      );
    }
    const freshness = await freshnessWithKill(cluster, rate, seconds * 2, (i) =>
      call(apis[i % apis.length] as string, 'POST', '/api/v1/tasks', {
        business: BUSINESS,
        name: `steady ${i}`,
      }),
    );
    process.stdout.write(
      `\nfreshness at ${rate} writes/s for ${seconds * 2} s, leader killed at ${seconds} s: lag p50 ${freshness.p50.toFixed(2)} s, p99 ${freshness.p99.toFixed(2)} s, max ${freshness.max.toFixed(2)} s; another projector led ${(freshness.handoverMs / 1000).toFixed(1)} s after the kill (target <= 15 s); ${freshness.errors} writes failed\n`,
    );
  } finally {
    await cluster.stop();
  }
}

/** Waits until no fact waits past the projector's cursor (a projector's /metrics says). */
async function caughtUp(cluster: Cluster): Promise<void> {
  for (;;) {
    for (const projector of cluster.projectors) {
      const text = await fetch(`${projector.url}/metrics`).then(
        (res) => res.text(),
        () => '',
      );
      const backlog = /^cairn_outbox_backlog_facts(?:\{[^}]*\})? (\S+)$/m.exec(text)?.[1];
      if (backlog === '0') return;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function issueToken(cluster: Cluster): Promise<string> {
  const res = await fetch(`${cluster.api[0]?.url}/api/v1/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${cluster.masterKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'topology bench',
      scopes: ['analytics:read', 'workflows:read', 'workflows:write'],
      businesses: [BUSINESS],
      kind: 'service_account',
    }),
  });
  return ((await res.json()) as { data: { token: string } }).data.token;
}

/**
 * `concurrency` loops calling `send` for `seconds`: the rate and latency percentiles of 2xx
 * answers, and the others counted by status.
 */
async function load(
  concurrency: number,
  seconds: number,
  send: (i: number) => Promise<number>,
): Promise<{ rate: number; p50: number; p99: number; errors: number; refused: string }> {
  const times: number[] = [];
  let errors = 0;
  const statuses = new Map<number, number>();
  let next = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const started = performance.now();
        const status = await send(next++).catch(() => 0);
        if (status >= 200 && status < 300) times.push(performance.now() - started);
        else {
          errors++;
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      }
    }),
  );
  return {
    rate: times.length / seconds,
    p50: percentile(times, 0.5),
    p99: percentile(times, 0.99),
    errors,
    refused: [...statuses].map(([status, n]) => `${n}×${status || 'network'}`).join(' '),
  };
}

/** The projector's lag sampled while writes arrive at `rate`/s, the leader killed halfway. */
async function freshnessWithKill(
  cluster: Cluster,
  rate: number,
  seconds: number,
  send: (i: number) => Promise<number>,
): Promise<{ p50: number; p99: number; max: number; handoverMs: number; errors: number }> {
  const lags: number[] = [];
  let errors = 0;
  let killedAt = Number.NaN;
  let handoverMs = Number.NaN;
  const until = performance.now() + seconds * 1000;
  const writing = (async () => {
    for (let i = 0; performance.now() < until; i++) {
      send(i).then(
        (status) => {
          if (status !== 201) errors++;
        },
        () => errors++,
      );
      await new Promise((resolve) => setTimeout(resolve, 1000 / rate));
    }
  })();
  const leaders = async () =>
    Promise.all(
      cluster.projectors.map(async (one) => {
        const text = await fetch(`${one.url}/metrics`).then(
          (res) => res.text(),
          () => '',
        );
        return {
          leading: /^cairn_projector_leader(\{[^}]*\})? 1$/m.test(text),
          lag: Number(/^cairn_projector_lag_seconds(?:\{[^}]*\})? (\S+)$/m.exec(text)?.[1]),
        };
      }),
    );
  while (performance.now() < until) {
    const states = await leaders();
    const lag = states.map((state) => state.lag).find((value) => Number.isFinite(value));
    if (lag !== undefined) lags.push(lag);
    if (Number.isNaN(killedAt) && performance.now() > until - (seconds * 1000) / 2) {
      const leader = cluster.projectors[states.findIndex((state) => state.leading)];
      leader?.signal('SIGKILL');
      killedAt = performance.now();
    } else if (
      !Number.isNaN(killedAt) &&
      Number.isNaN(handoverMs) &&
      states.some((s) => s.leading)
    ) {
      handoverMs = performance.now() - killedAt;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await writing;
  return {
    p50: percentile(lags, 0.5),
    p99: percentile(lags, 0.99),
    max: Math.max(...lags),
    handoverMs,
    errors,
  };
}
