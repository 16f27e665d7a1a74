import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { AppError } from '../../http/errors.ts';
import { clickHouseStorageFault } from '../../storage/clickhouse-errors.ts';
import { ANY_TAG } from '../../storage/result-store.ts';
import type { CompiledQuery } from '../compile/query-compiler.ts';
import { Admission, type AdmissionLimits, type QueryTicket } from './admission.ts';
import { AnswerReuse } from './answer-reuse.ts';
import { ResultCache } from './result-cache.ts';

/** The tags of what is read from `businesses` (null: every business). */
export const cacheTags = (businesses: readonly string[] | null): readonly string[] =>
  businesses ?? [ANY_TAG];

/** What ClickHouse answered, as `format: 'JSON'` shapes it. */
export interface EngineAnswer {
  data: Record<string, unknown>[];
  /** Rows before LIMIT and OFFSET (exact: `exact_rows_before_limit`). */
  rows_before_limit_at_least?: number;
  statistics?: { elapsed: number; rows_read: number; bytes_read: number };
  query_id: string;
}

export interface EngineLimits {
  /** The time budget: of the whole query in `QueryExecutorDeps`, of one statement here. */
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
  /**
   * The businesses the query reads (null: every business): what its kept statements are
   * tagged with, so an erasure forgets them and nothing else (result-cache.ts `forget`).
   */
  businesses: readonly string[] | null;
}

export interface Execution {
  answer: EngineAnswer;
  cache: 'hit' | 'miss';
  /** On a miss, what the statement's own-reads companion answered (`own-reads.ts`). */
  ownReads?: EngineAnswer;
  /** The statement (or its companion) stopped at its time budget: its figures may be short. */
  partial: boolean;
}

/** Runs one compiled statement on ClickHouse under its time budget and the memory cap. */
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
    // The per-query cap is the query's own doing (422); the whole engine short of memory is a
    // 503 that the error middleware's ClickHouse translator answers.
    if (
      (error as { type?: unknown } | null)?.type === 'MEMORY_LIMIT_EXCEEDED' &&
      !clickHouseStorageFault(error)
    ) {
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

/** Where no admission is given: every statement runs at once, under its query's budget. */
const UNADMITTED: AdmissionLimits = {
  total: Number.POSITIVE_INFINITY,
  perPrincipal: Number.POSITIVE_INFINITY,
  queuePerPrincipal: 0,
  maxWaitMs: Number.POSITIVE_INFINITY,
};

/**
 * The engine side of a query as the API runs it: for each statement, an answer from the result
 * cache when one exists at the current projection watermark, otherwise the engine, under the
 * query's one admission and one time budget (`begin`). Cache hits take no slot: they cost the
 * engine nothing, and a query answered wholly from the cache is never admitted.
 */
export class QueryExecutor {
  /** Whole answers stored while they hold, and shared between identical queries in flight. */
  readonly answers: AnswerReuse;
  private readonly deps: QueryExecutorDeps;
  private readonly admission: Admission;

  constructor(deps: QueryExecutorDeps) {
    this.deps = deps;
    this.admission = deps.admission ?? new Admission(UNADMITTED);
    this.answers = new AnswerReuse(deps.cache ?? null);
  }

  /** Opens one query: every statement it executes shares its admission and its time budget. */
  begin(options: ExecuteOptions): QueryRun {
    const ticket = this.admission.ticket(
      options.principal,
      options.signal,
      this.deps.limits.timeoutMs,
    );
    return new QueryRun(this.deps, ticket, options);
  }
}

type Statement = EngineAnswer & { partial: boolean };

/** One query's statements, as `QueryExecutor.begin` opened it; `close` when it is answered. */
export class QueryRun {
  /** Own-reads companions already asked for in this query: statements often share one. */
  private readonly counted = new Map<string, Promise<Statement>>();

  private readonly deps: QueryExecutorDeps;
  private readonly ticket: QueryTicket;
  private readonly options: ExecuteOptions;

  constructor(deps: QueryExecutorDeps, ticket: QueryTicket, options: ExecuteOptions) {
    this.deps = deps;
    this.ticket = ticket;
    this.options = options;
  }

  /**
   * `ownReads`, when given, counts what the statement reads (`own-reads.ts`); it runs only when
   * the cache did not answer the statement. `store: false` keeps a statement bound to the clock
   * reading out of the cache: it would never be found again.
   */
  async execute(
    compiled: CompiledQuery,
    ownReads?: CompiledQuery,
    { store = true }: { store?: boolean } = {},
  ): Promise<Execution> {
    const { cache } = this.deps;
    const { options } = this;
    // Stored per statement too: another query sharing a statement (a total, a page of the same
    // rows) finds it. Hits and misses are counted per query (answer-reuse.ts), not here.
    const key = cache && store ? ResultCache.key(compiled, options.watermark) : undefined;
    if (cache && key && options.useCache) {
      const cached = await cache.get<EngineAnswer>(key, { observe: false });
      if (cached) {
        // Nothing was read to give this answer.
        const statistics = { elapsed: 0, rows_read: 0, bytes_read: 0 };
        return { answer: { ...cached, statistics }, cache: 'hit', partial: false };
      }
    }
    // The companion starts beside the statement: on a server the two run at once; on chDB
    // each takes the engine in its turn.
    const [answer, counts] = await Promise.all([
      this.ticket.run((budgetMs) => this.onEngine(compiled, budgetMs)),
      ownReads ? this.countOwnReads(ownReads) : undefined,
    ]);
    const { partial, ...kept } = answer;
    if (cache && key && !partial) await cache.set(key, kept, this.tags);
    return {
      answer: kept,
      cache: 'miss',
      partial: partial || (counts?.partial ?? false),
      ...(counts ? { ownReads: counts } : {}),
    };
  }

  /**
   * A figure of the facts that holds while `holds` says so, kept under the watermark.
   * Never asked of the engine twice at one watermark while it holds, even by `no-cache` callers:
   * what it says depends on the facts and the clock alone, not on any cached answer.
   */
  remembered<T>(
    name: unknown,
    holds: (kept: T) => boolean,
    compute: () => Promise<T | undefined>,
  ): Promise<T | undefined> {
    const { cache } = this.deps;
    const key = AnswerReuse.key([name, this.options.watermark]);
    return cache
      ? cache.remember(key, compute, {
          holds: (kept) => kept !== undefined && holds(kept),
          tags: this.tags,
        })
      : compute();
  }

  /** What the query's kept statements are tagged with. */
  private get tags(): readonly string[] {
    return cacheTags(this.options.businesses);
  }

  /** Ends the query's admission; statements of it still waiting are dropped. */
  close(): void {
    this.ticket.close();
  }

  /**
   * The figures depend on the watermark alone, so a cached count serves even a caller who asked
   * for a fresh answer; these lookups stay out of the cache's hit and miss counts.
   */
  private countOwnReads(ownReads: CompiledQuery): Promise<Statement> {
    const { cache } = this.deps;
    const key = ResultCache.key(ownReads, this.options.watermark);
    let counting = this.counted.get(key);
    if (!counting) {
      counting = (async () => {
        const cached = cache ? await cache.get<EngineAnswer>(key, { observe: false }) : undefined;
        if (cached) return { ...cached, partial: false };
        const counts = await this.ticket.run((budgetMs) => this.onEngine(ownReads, budgetMs));
        const { partial, ...kept } = counts;
        if (cache && !partial) await cache.set(key, kept, this.tags);
        return counts;
      })();
      this.counted.set(key, counting);
    }
    return counting;
  }

  private async onEngine(compiled: CompiledQuery, budgetMs: number): Promise<Statement> {
    const limits = { ...this.deps.limits, timeoutMs: budgetMs };
    const answer = await runOnEngine(this.deps.clickhouse, compiled, limits, this.options.signal);
    if (answer.statistics) this.deps.engineRead?.(answer.statistics);
    // ClickHouse stops a statement at its budget quietly ('break'): the only trace is an
    // elapsed time at or past it. One that finished right at it is flagged too: the warning may
    // be spurious but is never missing.
    return { ...answer, partial: (answer.statistics?.elapsed ?? 0) * 1000 >= budgetMs };
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
