import { businessScope } from '../../auth/access.ts';
import { compileValues, type ValuesRequest } from '../compile/values-compiler.ts';
import type { Freshness } from '../execute/answer-freshness.ts';
import { AnswerReuse } from '../execute/answer-reuse.ts';
import { QueryExecutor, type QueryRun } from '../execute/query-execution.ts';
import { type PeriodName, type ResolvedPeriod, resolvePeriod } from '../period/period.ts';
import type { AnalyticsDeps, QueryContext } from '../query.service.ts';
import type { SourceName } from '../sources/rollups.ts';
import type { ValueDimension } from './dimension-values.schemas.ts';
import {
  compileValueList,
  LIST_CAP,
  listHolds,
  pickValues,
  type ValueCount,
  type ValueList,
} from './values-list.ts';
import { valueSources } from './values-source.ts';

export interface ValuesInput {
  business: string;
  dimension: ValueDimension;
  prefix?: string;
  period?: PeriodName;
  /** A canonical IANA name the engine can load (the route checks it). */
  timezone: string;
  limit: number;
}

export interface ValuesAnswer {
  data: ValueCount[];
  metadata: Record<string, unknown>;
  warnings?: Array<{ code: string; message: string }>;
}

/** What one lookup came to, before it is described. */
interface Found {
  data: ValueCount[];
  cache: 'hit' | 'miss';
  partial: boolean;
  dataAsOf: string;
}

/**
 * A dimension's values in one business, for a type-ahead: resolve the period (none: all time),
 * pick the cheapest source that counts them exactly, run one statement under the query
 * admission and time budget, and the result cache at the projection's watermark. A period only
 * facts answer is listed whole once and its keystrokes picked from that list (values-list.ts).
 */
export async function listDimensionValues(
  deps: AnalyticsDeps,
  input: ValuesInput,
  ctx: QueryContext,
): Promise<ValuesAnswer> {
  const started = performance.now();
  // Out of the caller's reach is answered as if it did not exist, as /query does.
  businessScope(ctx.businesses, input.business);
  const now = deps.now();
  const freshness = await deps.freshness(now);
  const period =
    input.period === undefined ? null : resolvePeriod(input.period, now, input.timezone);
  const sources = valueSources(input.dimension, period, deps.rollups(), now);
  if (ctx.source !== undefined && !sources.includes(ctx.source)) {
    throw new Error(`${ctx.source} cannot list these values exactly (${sources.join(', ')} can)`);
  }
  const source = ctx.source ?? sources[0] ?? 'facts';
  const prefix = input.prefix ?? '';
  const request = {
    business: input.business,
    dimension: input.dimension,
    prefix,
    period,
    limit: input.limit,
  };
  const executor =
    deps.executor ??
    new QueryExecutor({
      ...deps,
      limits: { timeoutMs: deps.timeoutMs, maxMemoryBytes: deps.maxMemoryBytes },
    });
  const useCache = ctx.useCache ?? true;
  const run = executor.begin({
    signal: ctx.signal,
    principal: ctx.principal ?? 'anonymous',
    useCache,
    watermark: freshness.watermark,
    businesses: [input.business],
  });
  let found: Found;
  try {
    const listed =
      source === 'facts' && period !== null
        ? await fromList(
            executor.answers,
            run,
            { ...request, period },
            { freshness, now, useCache },
          )
        : undefined;
    found = listed ?? (await byStatement(run, request, source, freshness));
  } finally {
    run.close();
  }
  return {
    data: found.data,
    metadata: {
      business: input.business,
      dimension: input.dimension,
      prefix,
      period: period && {
        name: period.name,
        from: period.from.toISOString(),
        to: period.to.toISOString(),
        timezone: period.timezone,
      },
      limit: input.limit,
      row_count: found.data.length,
      source,
      cache: found.cache,
      data_as_of: found.dataAsOf,
      elapsed_ms: Math.round((performance.now() - started) * 100) / 100,
    },
    ...(found.partial
      ? {
          warnings: [
            {
              code: 'partial_result',
              message: `The time budget of ${deps.timeoutMs} ms ran out: counts may be short and values missing.`,
            },
          ],
        }
      : {}),
  };
}

/** One statement with the prefix and the limit, kept per watermark in the result cache. */
async function byStatement(
  run: QueryRun,
  request: ValuesRequest,
  source: SourceName,
  freshness: Freshness,
): Promise<Found> {
  const execution = await run.execute(compileValues(request, source));
  return {
    data: execution.answer.data.map(toValueCount),
    cache: execution.cache,
    partial: execution.partial,
    dataAsOf: freshness.dataAsOf.toISOString(),
  };
}

/**
 * The keystroke picked from the list of every value of the period, kept a short while
 * (values-list.ts); undefined when the period holds more values than a list keeps.
 */
async function fromList(
  answers: AnswerReuse,
  run: QueryRun,
  request: ValuesRequest & { period: ResolvedPeriod },
  at: { freshness: Freshness; now: Date; useCache: boolean },
): Promise<Found | undefined> {
  const { freshness, now } = at;
  const key = AnswerReuse.key([
    'values_list',
    request.business,
    request.dimension,
    request.period.from,
    request.period.to,
  ]);
  const { value: list, kept } = await answers.keptWhile<ValueList>(
    key,
    async () => {
      const execution = await run.execute(compileValueList(request, 'facts'), undefined, {
        store: false,
      });
      const values = execution.answer.data.map(toValueCount);
      const complete = values.length <= LIST_CAP;
      return {
        values: complete ? values : [],
        complete,
        partial: execution.partial,
        watermark: freshness.watermark,
        computedAt: now.getTime(),
        dataAsOf: freshness.dataAsOf.toISOString(),
      };
    },
    {
      holds: (held) => listHolds(held, freshness.watermark, now.getTime()),
      keep: (made) => !made.partial,
      fresh: !at.useCache,
      tags: [request.business],
    },
  );
  if (!list.complete) return undefined;
  return {
    data: pickValues(list, request.prefix, request.limit),
    cache: kept ? 'hit' : 'miss',
    partial: list.partial,
    dataAsOf: list.dataAsOf,
  };
}

const toValueCount = (row: Record<string, unknown>): ValueCount => ({
  value: String(row.value),
  facts: Number(row.n),
});
