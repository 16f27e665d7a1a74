// `npm run bench -- abuse [--seconds 10] [--clients 4] [--statement-timeout-ms 1000]
// [--rounds 40] [--only health,postgres,refusals]`. Figures about hostile load, each beside its
// own baseline in the same run:
//  1. /healthz p99 while `--clients` clients send 1 MiB bodies of 100,000 invalid metrics to
//     /api/v1/query back to back (each under its rate limit), against /healthz p99 with no load.
//     The server runs in a child process on embedded engines, so load and service do not share
//     an event loop; /healthz is probed one request at a time every 20 ms.
//  2. A Postgres frozen with SIGSTOP under a running service: how long a task creation waits
//     for its answer, against the configured statement timeout + 1 s.
//  3. How long the 422 of a body of 100,000 invalid metrics takes against that of a body of
//     the same size with one bad field, one request at a time: the first after start (the
//     checking thread starts then) and `--rounds` more of each, in turns.
import { randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { privatePostgres } from '../dev-tools/private-servers.ts';
import { numberOption, textOption } from './options.ts';
import { percentile } from './percentile.ts';
import { type Served, serveMain } from './serve-main.ts';

const MASTER_KEY = randomBytes(32).toString('base64url');

/** One client per token, each sending the body back to back until the time is up. */
const LOAD_SCRIPT = `
const { parentPort, workerData } = require('node:worker_threads');
const { url, tokens, body, ms } = workerData;
// Hostile clients are other machines in life: here they share two cores with the server, so
// they run below its priority and the probe times the server rather than the load generator.
try { require('node:os').setPriority(10); } catch {}
const end = Date.now() + ms;
let sent = 0;
const statuses = {};
Promise.all(tokens.map(async (token) => {
  while (Date.now() < end) {
    const res = await fetch(url + '/api/v1/query', {
      method: 'POST',
      headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json' },
      body,
    });
    await res.arrayBuffer();
    sent += 1;
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
  }
})).then(() => parentPort.postMessage({ sent, statuses }));
`;

function serve(env: Record<string, string>): Promise<Served> {
  return serveMain(env, { masterKey: MASTER_KEY, dataDirPrefix: 'cairn-abuse-' });
}

async function issueToken(url: string, kind: 'user' | 'service_account'): Promise<string> {
  const res = await fetch(`${url}/api/v1/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${MASTER_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'abuse',
      scopes: ['analytics:read', 'workflows:read', 'workflows:write'],
      businesses: ['abuse'],
      kind,
    }),
  });
  return ((await res.json()) as { data: { token: string } }).data.token;
}

/** /healthz latencies, one request at a time every 20 ms, for `ms`. */
async function probeHealth(url: string, ms: number): Promise<number[]> {
  const samples: number[] = [];
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const started = performance.now();
    await (await fetch(`${url}/healthz`)).text();
    samples.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return samples;
}

async function healthUnderBadBodies(seconds: number, clients: number): Promise<void> {
  const server = await serve({});
  try {
    const tokens = await Promise.all(
      Array.from({ length: clients }, () => issueToken(server.url, 'service_account')),
    );
    const body = JSON.stringify({
      metrics: Array.from({ length: 100_000 }, (_, i) => `m${i}`),
    });
    await probeHealth(server.url, 2_000); // warm-up
    const idle = await probeHealth(server.url, seconds * 1000);
    // The load runs on its own thread, so the probe's timings are the server's, not its own
    // event loop's while it pushes megabytes.
    const load = new Worker(LOAD_SCRIPT, {
      eval: true,
      workerData: { url: server.url, tokens, body, ms: seconds * 1000 + 500 },
    });
    const loadDone = new Promise<{ sent: number; statuses: Record<string, number> }>((resolve) =>
      load.once('message', resolve),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const loaded = await probeHealth(server.url, seconds * 1000);
    const { sent, statuses } = await loadDone;
    await load.terminate();
    const idleP99 = percentile(idle, 0.99);
    const loadedP99 = percentile(loaded, 0.99);
    process.stdout.write(
      [
        `bodies: ${(body.length / 1_048_576).toFixed(2)} MiB of 100,000 invalid metrics, ${clients} clients, ${sent} sent in ${seconds} s (${Object.entries(
          statuses,
        )
          .map(([s, n]) => `${n}×${s}`)
          .join(', ')})`,
        `/healthz idle:   p50 ${percentile(idle, 0.5).toFixed(1)} ms, p99 ${idleP99.toFixed(1)} ms (${idle.length} probes)`,
        `/healthz loaded: p50 ${percentile(loaded, 0.5).toFixed(1)} ms, p99 ${loadedP99.toFixed(1)} ms (${loaded.length} probes)`,
        `p99 loaded / idle: ${(loadedP99 / idleP99).toFixed(2)} (target ≤ 2)`,
        '',
      ].join('\n'),
    );
  } finally {
    await server.stop();
  }
}

async function frozenPostgres(statementTimeoutMs: number): Promise<void> {
  const postgres = await privatePostgres();
  let server: Served | undefined;
  try {
    server = await serve({
      DATABASE_URL: postgres.url,
      CAIRN_PG_STATEMENT_TIMEOUT_MS: String(statementTimeoutMs),
    });
    const token = await issueToken(server.url, 'user');
    const create = async () => {
      const started = performance.now();
      const res = await fetch(`${server?.url}/api/v1/tasks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ business: 'abuse', name: 'frozen' }),
      });
      await res.text();
      return { status: res.status, ms: performance.now() - started };
    };
    const healthy = await create();
    await postgres.pause?.();
    let frozen: { status: number; ms: number };
    try {
      frozen = await create();
    } finally {
      await postgres.resume?.();
    }
    process.stdout.write(
      [
        `Postgres healthy: task creation ${healthy.status} in ${healthy.ms.toFixed(0)} ms`,
        `Postgres frozen (SIGSTOP): answered ${frozen.status} in ${frozen.ms.toFixed(0)} ms; limit statement timeout + 1 s = ${statementTimeoutMs + 1000} ms`,
        '',
      ].join('\n'),
    );
  } finally {
    await server?.stop();
    await postgres.stop();
  }
}

/** The two 1 MiB-ish bodies of part 3: as many bytes, one refused at every item, one at one field. */
function refusedBodies(): Record<'bad metrics' | 'one bad field', string> {
  const metrics = JSON.stringify({ metrics: Array.from({ length: 100_000 }, (_, i) => `m${i}`) });
  const head = '{"metrics":["tasks_created"],"business":"';
  const field = `${head}${'x'.repeat(metrics.length - head.length - 2)}"}`;
  return { 'bad metrics': metrics, 'one bad field': field };
}

async function refusalTimes(rounds: number): Promise<void> {
  const bodies = refusedBodies();
  const kinds = Object.keys(bodies) as Array<keyof typeof bodies>;
  const refuse = async (url: string, token: string, body: string) => {
    const started = performance.now();
    const res = await fetch(`${url}/api/v1/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body,
    });
    await res.arrayBuffer();
    if (res.status !== 422) throw new Error(`expected a 422, got ${res.status}`);
    return performance.now() - started;
  };
  const first: Partial<Record<keyof typeof bodies, number>> = {};
  const times: Record<keyof typeof bodies, number[]> = { 'bad metrics': [], 'one bad field': [] };
  // Each kind first on a server of its own: both pay the checking thread's start.
  for (const [index, kind] of kinds.entries()) {
    const server = await serve({});
    try {
      const token = await issueToken(server.url, 'service_account');
      first[kind] = await refuse(server.url, token, bodies[kind]);
      if (index < kinds.length - 1) continue;
      for (let i = 0; i < 5; i++) for (const k of kinds) await refuse(server.url, token, bodies[k]);
      for (let i = 0; i < rounds; i++) {
        for (const k of kinds) times[k].push(await refuse(server.url, token, bodies[k]));
      }
    } finally {
      await server.stop();
    }
  }
  const line = (kind: keyof typeof bodies) =>
    `${kind.padEnd(13)} ${(bodies[kind].length / 1_048_576).toFixed(2)} MiB: first ${first[kind]?.toFixed(0)} ms, then p50 ${percentile(times[kind], 0.5).toFixed(1)} ms, p99 ${percentile(times[kind], 0.99).toFixed(1)} ms (${times[kind].length})`;
  const bound = (q: number) => 3 * percentile(times['one bad field'], q) + 50;
  process.stdout.write(
    [
      '422 times, one request at a time:',
      line('bad metrics'),
      line('one bad field'),
      `bad metrics within 3 × one bad field + 50 ms: p50 ${percentile(times['bad metrics'], 0.5).toFixed(1)} ≤ ${bound(0.5).toFixed(1)}, p99 ${percentile(times['bad metrics'], 0.99).toFixed(1)} ≤ ${bound(0.99).toFixed(1)}, first ${first['bad metrics']?.toFixed(0)} ≤ ${(3 * (first['one bad field'] ?? 0) + 50).toFixed(0)}`,
      '',
    ].join('\n'),
  );
}

export async function run(args: string[]): Promise<void> {
  const seconds = numberOption(args, 'seconds', 10);
  const clients = numberOption(args, 'clients', 4);
  const statementTimeoutMs = numberOption(args, 'statement-timeout-ms', 1_000);
  const rounds = numberOption(args, 'rounds', 40);
  const only = textOption(args, 'only', 'health,postgres,refusals').split(',');
  if (only.includes('health')) await healthUnderBadBodies(seconds, clients);
  if (only.includes('postgres')) await frozenPostgres(statementTimeoutMs);
  if (only.includes('refusals')) await refusalTimes(rounds);
}
