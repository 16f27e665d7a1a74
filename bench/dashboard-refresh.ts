import http from 'node:http';
import type { QueryRequest } from '../libs/analytics/parse/query-parser.ts';
import { httpCall } from './http-call.ts';

/** One screen: its own user's `analytics:read` token, and the queries its panels send. */
export interface Dashboard {
  token: string;
  queries: QueryRequest[];
}

export interface DashboardOptions {
  url: string;
  /**
   * Each with its own token, as each screen is its own user's: the service bounds queries
   * running and queued per caller, and shares answers across callers.
   */
  dashboards: Dashboard[];
  /** Called once every dashboard's first refresh is answered. */
  afterFirstRefresh?: () => void;
  intervalMs: number;
  seconds: number;
  /** Same seed, same start offsets. */
  seed: number;
}

export type CacheAnswer = 'hit' | 'miss' | 'coalesced';

/** What the dashboards saw; latencies of refreshes and answers after each one's first refresh. */
export interface DashboardFigures {
  refreshes: number;
  /** Per refresh: ms until all its answers were in. */
  refreshMs: number[];
  /** Per answer: ms from its request to its whole answer. */
  answerMs: number[];
  /** `metadata.cache` of every answer after the first cycle. */
  later: Record<CacheAnswer, number>;
  failed: number;
  lastFailure?: string;
}

/** A small seeded generator (mulberry32): the same offsets on every run. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/**
 * Dashboards refreshing every `intervalMs` for `seconds`, each from its own offset inside the
 * first interval. A refresh sends all its queries at once, as a page's panels load together,
 * each dashboard on its own kept-alive sockets. Refreshes are due by the clock: a slow one
 * does not push the next back.
 */
export async function refreshDashboards(options: DashboardOptions): Promise<DashboardFigures> {
  const random = seededRandom(options.seed);
  const figures: DashboardFigures = {
    refreshes: 0,
    refreshMs: [],
    answerMs: [],
    later: { hit: 0, miss: 0, coalesced: 0 },
    failed: 0,
  };
  const url = `${options.url}/api/v1/query`;
  const endMs = options.seconds * 1000;

  const ask = async (
    agent: http.Agent,
    headers: Record<string, string>,
    body: string,
    cycle: number,
  ) => {
    const started = performance.now();
    const answer = await httpCall(agent, 'POST', url, headers, body).catch((error: Error) => ({
      status: 0,
      body: error.message,
    }));
    const ms = performance.now() - started;
    if (answer.status !== 200) {
      figures.failed++;
      figures.lastFailure = `${answer.status} ${answer.body.slice(0, 200)}`;
      return;
    }
    if (cycle === 0) return;
    figures.answerMs.push(ms);
    const cache = (JSON.parse(answer.body) as { metadata?: { cache?: CacheAnswer } }).metadata
      ?.cache;
    if (cache === undefined || !(cache in figures.later)) {
      throw new Error(`an answer without metadata.cache: ${answer.body.slice(0, 200)}`);
    }
    figures.later[cache]++;
  };

  let firstRefreshes = options.dashboards.length;
  const dashboard = async (offsetMs: number, { token, queries }: Dashboard, started: number) => {
    const bodies = queries.map((query) => JSON.stringify(query));
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const agent = new http.Agent({ keepAlive: true, maxSockets: bodies.length });
    const refreshes: Array<Promise<void>> = [];
    for (let cycle = 0; offsetMs + cycle * options.intervalMs < endMs; cycle++) {
      const dueIn = started + offsetMs + cycle * options.intervalMs - performance.now();
      if (dueIn > 0) await new Promise((resolve) => setTimeout(resolve, dueIn));
      const sent = performance.now();
      figures.refreshes++;
      refreshes.push(
        Promise.all(bodies.map((body) => ask(agent, headers, body, cycle))).then(() => {
          if (cycle > 0) figures.refreshMs.push(performance.now() - sent);
          else if (--firstRefreshes === 0) options.afterFirstRefresh?.();
        }),
      );
    }
    await Promise.all(refreshes);
    agent.destroy();
  };

  const offsets = options.dashboards.map(() => Math.floor(random() * options.intervalMs));
  const started = performance.now();
  await Promise.all(
    offsets.map((offset, i) => dashboard(offset, options.dashboards[i] as Dashboard, started)),
  );
  return figures;
}
