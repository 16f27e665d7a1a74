// Slow connections from one address against another address's service: one address
// (127.0.0.2) keeps `sockets` connections open that send partial headers, re-opening each as
// soon as the server closes it (its share refused at once, the header deadline, or room made
// for someone else), while another address (127.0.0.1) probes `GET /healthz` one request at a
// time, each on a new connection. On Linux the whole of 127.0.0.0/8 is loopback, so both are
// client addresses of their own on one machine. 1,100 sockets need as many file descriptors
// in this process (`ulimit -n`), and the server's side needs up to its connection cap.
import { randomBytes } from 'node:crypto';
import { get } from 'node:http';
import { holdSlowSockets } from '../dev-tools/slow-sockets.ts';
import { type Served, serveMain } from './serve-main.ts';

export interface ConnectionIsolationOptions {
  /** A running server; without one, a server on embedded engines is started for the run. */
  url?: string;
  /** Settings of the server started for the run (ignored with `url`). */
  env?: Record<string, string>;
  /** How long the probing lasts. @defaultValue 20 */
  seconds?: number;
  /** Slow sockets the other address keeps open. @defaultValue 1100 */
  sockets?: number;
  /** A probe not answered within this counts as not served. @defaultValue 5000 */
  probeTimeoutMs?: number;
}

export interface ConnectionIsolation {
  probes: number;
  /** Probes answered 200. */
  served: number;
  /** served / probes. */
  ratio: number;
  /** What the probes that were not served got, by kind. */
  failures: Record<string, number>;
  /** Connections the slow address opened in all (re-openings included). */
  slowConnects: number;
}

export const SLOW_ADDRESS = '127.0.0.2';
export const PROBE_ADDRESS = '127.0.0.1';
const PROBE_EVERY_MS = 50;

/**
 * Opens the slow sockets, probes for `seconds`, and answers how many probes were served.
 * Meant for `npm run bench -- isolation`; the target is ≥ 99 % served.
 */
export async function measureConnectionIsolation(
  options: ConnectionIsolationOptions = {},
): Promise<ConnectionIsolation> {
  const { seconds = 20, sockets = 1_100, probeTimeoutMs = 5_000 } = options;
  const server = options.url ? undefined : await startServer(options.env ?? {});
  const url = options.url ?? (server?.url as string);
  const slow = holdSlowSockets({ url, sockets, addresses: [SLOW_ADDRESS] });
  try {
    // The slow address first gets its sockets in (or refused), as an attack already under way.
    const settle = Date.now() + 10_000;
    while ((await slow.connects()) < sockets && Date.now() < settle) await pause(100);
    await pause(1_000);
    const failures: Record<string, number> = {};
    let probes = 0;
    let served = 0;
    const end = Date.now() + seconds * 1000;
    while (Date.now() < end) {
      const answer = await probe(`${url}/healthz`, probeTimeoutMs);
      probes += 1;
      if (answer === 200) served += 1;
      else failures[String(answer)] = (failures[String(answer)] ?? 0) + 1;
      await pause(PROBE_EVERY_MS);
    }
    const connects = await slow.stop();
    return {
      probes,
      served,
      ratio: probes ? served / probes : 0,
      failures,
      slowConnects: connects,
    };
  } finally {
    await slow.stop();
    await server?.stop();
  }
}

/** `GET` on a new connection from the probe address: the status, or what went wrong. */
function probe(url: string, timeoutMs: number): Promise<number | string> {
  return new Promise((resolve) => {
    const req = get(url, { localAddress: PROBE_ADDRESS, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 'no status'));
      res.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error(), { code: 'timeout' })));
  });
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The service on embedded engines in a child process, so probe and server share no loop. */
async function startServer(env: Record<string, string>): Promise<Served> {
  const server = await serveMain(env, {
    masterKey: randomBytes(32).toString('base64url'),
    dataDirPrefix: 'cairn-connections-',
    startTimeoutMs: 300_000,
  });
  // A first start loads a demo dataset after it starts serving: measure once that is done and
  // /healthz answers promptly again.
  const deadline = Date.now() + 300_000;
  let prompt = 0;
  while (prompt < 5) {
    if (server.child.exitCode !== null || Date.now() > deadline) {
      await server.stop();
      throw new Error(`server did not settle: ${server.said()}`);
    }
    const started = performance.now();
    const answer = await probe(`${server.url}/healthz`, 5_000);
    prompt = answer === 200 && performance.now() - started < 250 ? prompt + 1 : 0;
    await pause(200);
  }
  return server;
}
