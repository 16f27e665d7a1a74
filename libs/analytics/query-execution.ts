import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { AppError } from '../http/errors.ts';
import type { Admission } from './admission.ts';
import type { CompiledQuery } from './query-compiler.ts';
import { ResultCache } from './result-cache.ts';

/** What ClickHouse answered, as `format: 'JSON'` shapes it. */
export interface EngineAnswer {
  data: Record<string, unknown>[];
  /** Rows before LIMIT and OFFSET (exact: `exact_rows_before_limit`). */
  rows_before_limit_at_least?: number;
  statistics?: { elapsed: number; rows_read: number; bytes_read: number };
  query_id: string;
}

export interface EngineLimits {
  timeoutMs: number;
  /** ClickHouse `max_memory_usage` for the statement; unset leaves the server's own limit. */
  maxMemoryBytes?: number;
}

export interface ExecuteOptions {
  signal: AbortSignal;
  /** Whose query this is, for fair admission. */
  principal: string;
  /** False when the caller sent `Cache-Control: no-cache`: the answer is computed afresh. */
  useCache: boolean;
  /** The projection watermark read before the engine runs (see `Freshness.watermark`). */
  watermark: string;
}

export interface Execution {
  answer: EngineAnswer;
  cache: 'hit' | 'miss';
  /** On a miss, what the statement's own-reads companion answered (`own-reads.ts`). */
  ownReads?: EngineAnswer;
}

/** Runs one compiled statement on ClickHouse under the time budget and the memory cap. */
export async function runOnEngine(
  clickhouse: ClickHouseClient,
  compiled: CompiledQuery,
  limits: EngineLimits,
  signal: AbortSignal,
): Promise<EngineAnswer> {
  try {
    const result = await clickhouse.query({
      query: compiled.sql,
      query_params: compiled.params,
      query_id: randomUUID(),
      format: 'JSON',
      abort_signal: signal,
      clickhouse_settings: {
        // 'break' returns what was computed when the budget runs out; it is flagged as partial.
        max_execution_time: limits.timeoutMs / 1000,
        timeout_overflow_mode: 'break',
        // A server stops the query when our aborted request closes its connection.
        cancel_http_readonly_queries_on_client_close: 1,
        exact_rows_before_limit: 1,
        ...(limits.maxMemoryBytes ? memoryBounds(limits.maxMemoryBytes) : {}),
      },
    });
    const json = (await result.json<Record<string, unknown>>()) as unknown as EngineAnswer;
    return {
      data: json.data,
      rows_before_limit_at_least: json.rows_before_limit_at_least,
      statistics: json.statistics,
      query_id: result.query_id,
    };
  } catch (error) {
    // By shape: chDB raises its own copy of the client's ClickHouseError class.
    if ((error as { type?: unknown } | null)?.type === 'MEMORY_LIMIT_EXCEEDED') {
      throw memoryLimitExceeded(limits.maxMemoryBytes);
    }
    throw error;
  }
}

function memoryLimitExceeded(limit: number | undefined): AppError {
  const size = limit === undefined ? 'the memory' : `the ${formatBytes(limit)} of memory`;
  return new AppError(
    'memory_limit_exceeded',
    `The query needed more than ${size} one query may use. Narrow the period, filter to fewer businesses, or use fewer or coarser dimensions.`,
    { members: { max_memory_bytes: limit ?? null } },
  );
}

const formatBytes = (bytes: number): string =>
  bytes % 1_073_741_824 === 0
    ? `${bytes / 1_073_741_824} GiB`
    : bytes % 1_048_576 === 0
      ? `${bytes / 1_048_576} MiB`
      : `${bytes} bytes`;

export interface QueryExecutorDeps {
  clickhouse: ClickHouseClient;
  limits: EngineLimits;
  /** Without it, statements run at once (scripts and tests that call the service directly). */
  admission?: Admission;
  /** Without it (or when turned off), every answer comes from the engine. */
  cache?: ResultCache | null;
  /** What the engine itself read for each statement it ran: operator metrics only. */
  engineRead?: (statistics: NonNullable<EngineAnswer['statistics']>) => void;
}

/**
 * The engine side of a query as the API runs it: an answer from the result cache when one exists
 * for this statement at the current projection watermark, otherwise a fair slot from admission,
 * then the engine. Cache hits take no slot: they cost the engine nothing.
 */
export class QueryExecutor {
  private readonly deps: QueryExecutorDeps;

  constructor(deps: QueryExecutorDeps) {
    this.deps = deps;
  }

  /**
   * `ownReads`, when given, counts what the statement reads (`own-reads.ts`); it runs only when
   * the cache did not answer the statement.
   */
  async execute(
    compiled: CompiledQuery,
    options: ExecuteOptions,
    ownReads?: CompiledQuery,
  ): Promise<Execution> {
    const { cache, admission } = this.deps;
    const key = cache ? ResultCache.key(compiled, options.watermark) : undefined;
    if (cache && key && !options.useCache) cache.bypassed();
    if (cache && key && options.useCache) {
      const cached = await cache.get<EngineAnswer>(key);
      if (cached) {
        // Nothing was read to give this answer.
        const statistics = { elapsed: 0, rows_read: 0, bytes_read: 0 };
        return { answer: { ...cached, statistics }, cache: 'hit' };
      }
    }
    // The companion starts beside the statement, in its slot: on a server the two run at once.
    // Its cache is asked inside the slot, so a companion another statement of the same answer
    // has just counted is found there.
    const run = () =>
      Promise.all([
        this.onEngine(compiled, options.signal),
        ownReads ? this.countOwnReads(ownReads, options) : undefined,
      ]);
    const [answer, counts] = admission
      ? await admission.run(options.principal, options.signal, run)
      : await run();
    if (cache && key && !this.partial(answer)) await cache.set(key, answer);
    return { answer, cache: 'miss', ...(counts ? { ownReads: counts } : {}) };
  }

  /** A partial answer (time budget spent) is not worth keeping. */
  private partial(answer: EngineAnswer): boolean {
    return (answer.statistics?.elapsed ?? 0) * 1000 >= this.deps.limits.timeoutMs;
  }

  /**
   * The figures depend on the watermark alone, so a cached count serves even a caller who asked
   * for a fresh answer; these lookups stay out of the cache's hit and miss counts.
   */
  private async countOwnReads(
    ownReads: CompiledQuery,
    options: ExecuteOptions,
  ): Promise<EngineAnswer> {
    const { cache } = this.deps;
    const key = cache ? ResultCache.key(ownReads, options.watermark) : undefined;
    const cached =
      cache && key ? await cache.get<EngineAnswer>(key, { observe: false }) : undefined;
    if (cached) return cached;
    const counts = await this.onEngine(ownReads, options.signal);
    if (cache && key && !this.partial(counts)) await cache.set(key, counts);
    return counts;
  }

  private async onEngine(compiled: CompiledQuery, signal: AbortSignal): Promise<EngineAnswer> {
    const answer = await runOnEngine(this.deps.clickhouse, compiled, this.deps.limits, signal);
    if (answer.statistics) this.deps.engineRead?.(answer.statistics);
    return answer;
  }
}

/**
 * The memory cap, and where a statement spills to disk instead of reaching it: sorts (the
 * window functions that replay task histories) and aggregations past a quarter of the cap go on
 * in temporary files, slower, rather than failing a query that simply covers a lot of data.
 */
function memoryBounds(maxBytes: number) {
  const spillAt = String(Math.floor(maxBytes / 4));
  return {
    max_memory_usage: String(maxBytes),
    max_bytes_before_external_sort: spillAt,
    max_bytes_before_external_group_by: spillAt,
  };
}
