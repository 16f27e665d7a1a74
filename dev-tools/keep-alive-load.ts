// A client that keeps a pool of connections open from one address, as a dashboard server or a
// NAT does, and sends a mix of requests through it: small JSON, analytics queries, an export and
// the docs' 1.5 MB script bundle. It counts every request that got no answer (a reset, a
// connection closed under it): whatever the load beside it, that count must be 0. Optionally
// with the slow-header attack (slow-sockets.ts) running at the same time.
import { Pool } from 'undici';
import { holdSlowSockets } from './slow-sockets.ts';

export interface KeepAliveLoadOptions {
  url: string;
  /** `Bearer …` of a token that reads tasks and analytics of `business`. */
  authorization: string;
  business: string;
  /** Connections of the pool. @defaultValue 64 */
  connections?: number;
  /** Requests sent in all. @defaultValue 100000 */
  requests?: number;
  /** Requests a connection carries at once (HTTP/1.1 pipelining). @defaultValue 1 */
  pipelining?: number;
  /** Address the pool connects from. @defaultValue '127.0.0.1' */
  localAddress?: string;
  /** The slow-header attack held beside the load. */
  slow?: { sockets: number; addresses: readonly string[] };
  /**
   * One request in this many is followed by a pause of up to 100 ms on its lane, so sockets go
   * idle now and then, as a dashboard's do between refreshes. @defaultValue 20
   */
  pauseEvery?: number;
}

export interface KeepAliveLoad {
  requests: number;
  /** Answers by status. */
  statuses: Record<string, number>;
  /** Answers other than 2xx, by kind of request and status. */
  refusals: Record<string, number>;
  /** The first body of each of those. */
  refused: Record<string, string>;
  /** Requests that got no answer, by what the client saw (a reset, "other side closed", …). */
  failures: Record<string, number>;
  failed: number;
  /** Requests of each kind sent. */
  kinds: Record<string, number>;
  /** Response body bytes read. */
  bytes: number;
  seconds: number;
  /** Connections the slow address(es) opened, re-openings included. */
  slowConnects: number;
  /** Connections the pool opened: more than its size means some were closed under it. */
  poolConnects: number;
  /** Why the pool's connections ended before the pool was closed, by reason. */
  poolDisconnects: Record<string, number>;
}

interface Call {
  kind: string;
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** The mix, in twenty: what a dashboard and its users ask of one instance. */
function mix(options: KeepAliveLoadOptions, bundle: string): Call[] {
  const auth = { authorization: options.authorization };
  const json = { ...auth, 'content-type': 'application/json' };
  const business = encodeURIComponent(options.business);
  const query = { metrics: ['tasks_created'], period: 'last_30_days', business: options.business };
  const breakdown = {
    metrics: ['tasks_created', 'tasks_completed'],
    dimensions: ['day', 'project'],
    period: 'last_90_days',
    business: options.business,
  };
  const times = (count: number, call: Call): Call[] => Array.from({ length: count }, () => call);
  return [
    ...times(4, { kind: 'health', method: 'GET', path: '/healthz' }),
    ...times(4, {
      kind: 'tasks',
      method: 'GET',
      path: `/api/v1/tasks?business=${business}&per_page=20`,
      headers: auth,
    }),
    ...times(3, {
      kind: 'query',
      method: 'POST',
      path: '/api/v1/query',
      headers: json,
      body: JSON.stringify(query),
    }),
    ...times(3, {
      kind: 'query',
      method: 'POST',
      path: '/api/v1/query',
      headers: json,
      body: JSON.stringify(breakdown),
    }),
    ...times(2, {
      kind: 'query',
      method: 'GET',
      path: `/api/v1/query?q=${encodeURIComponent(JSON.stringify(query))}`,
      headers: auth,
    }),
    ...times(2, { kind: 'openapi', method: 'GET', path: '/openapi.json' }),
    {
      kind: 'export',
      method: 'POST',
      path: '/api/v1/query/export',
      headers: json,
      body: JSON.stringify(breakdown),
    },
    { kind: 'bundle', method: 'GET', path: bundle },
  ];
}

/** The docs' script bundle, whose path carries a content hash: read off the docs page. */
async function bundlePath(pool: Pool): Promise<string> {
  const { body } = await pool.request({ method: 'GET', path: '/docs' });
  const page = await body.text();
  const found = /src="([^"]*swagger-ui-bundle\.js)"/.exec(page)?.[1];
  if (!found) throw new Error('the docs page names no swagger-ui-bundle.js');
  return found;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the load (and the attack beside it) to the end and counts what came back. */
export async function keepAliveLoad(options: KeepAliveLoadOptions): Promise<KeepAliveLoad> {
  const connections = options.connections ?? 64;
  const total = options.requests ?? 100_000;
  const pauseEvery = options.pauseEvery ?? 20;
  const pool = new Pool(options.url, {
    connections,
    pipelining: options.pipelining ?? 1,
    connect: { localAddress: options.localAddress ?? '127.0.0.1' },
    // A busy machine answers late; only an answer that never comes counts.
    headersTimeout: 300_000,
    bodyTimeout: 300_000,
  });
  const slow = options.slow && holdSlowSockets({ url: options.url, ...options.slow });
  const result: KeepAliveLoad = {
    requests: 0,
    statuses: {},
    refusals: {},
    refused: {},
    failures: {},
    failed: 0,
    kinds: {},
    bytes: 0,
    seconds: 0,
    slowConnects: 0,
    poolConnects: 0,
    poolDisconnects: {},
  };
  let closing = false;
  pool.on('connect', () => {
    result.poolConnects += 1;
  });
  pool.on('disconnect', (_origin, _targets, error) => {
    if (closing) return;
    const { code, message } = error as { code?: string; message?: string };
    const why = `${code ?? 'error'}: ${message ?? ''}`.trim();
    result.poolDisconnects[why] = (result.poolDisconnects[why] ?? 0) + 1;
  });
  try {
    const calls = mix(options, await bundlePath(pool));
    if (slow) {
      // The attack under way first: the load starts on a server already holding it.
      const settle = Date.now() + 10_000;
      while ((await slow.connects()) < (options.slow?.sockets ?? 0) && Date.now() < settle) {
        await pause(100);
      }
      await pause(500);
    }
    const started = performance.now();
    let next = 0;
    const lane = async () => {
      while (next < total) {
        const call = calls[next % calls.length] as Call;
        next += 1;
        result.requests += 1;
        result.kinds[call.kind] = (result.kinds[call.kind] ?? 0) + 1;
        try {
          const { statusCode, body } = await pool.request({
            method: call.method,
            path: call.path,
            headers: call.headers,
            body: call.body,
          });
          let text = '';
          for await (const chunk of body) {
            result.bytes += (chunk as Buffer).length;
            if (statusCode >= 300 && text.length < 500) text += chunk.toString();
          }
          result.statuses[statusCode] = (result.statuses[statusCode] ?? 0) + 1;
          if (statusCode >= 300) {
            const what = `${call.kind} ${statusCode}`;
            result.refusals[what] = (result.refusals[what] ?? 0) + 1;
            result.refused[what] ??= text.slice(0, 500);
          }
        } catch (error) {
          const { code, message } = error as { code?: string; message?: string };
          const what = `${code ?? 'error'}: ${message ?? ''}`.trim();
          result.failures[what] = (result.failures[what] ?? 0) + 1;
          result.failed += 1;
        }
        if (Math.random() * pauseEvery < 1) await pause(Math.random() * 100);
      }
    };
    // As many lanes as a full pool carries: every socket has its next request as soon as it can.
    await Promise.all(Array.from({ length: connections * (options.pipelining ?? 1) }, lane));
    result.seconds = (performance.now() - started) / 1000;
  } finally {
    result.slowConnects = (await slow?.stop()) ?? 0;
    closing = true;
    await pool.close();
  }
  return result;
}
