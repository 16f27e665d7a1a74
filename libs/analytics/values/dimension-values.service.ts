import { businessScope } from '../../auth/access.ts';
import { QueryExecutor } from '../execute/query-execution.ts';
import { type PeriodName, resolvePeriod } from '../period/period.ts';
import type { AnalyticsDeps, QueryContext } from '../query.service.ts';
import type { ValueDimension } from './dimension-values.schemas.ts';
import { compileValues } from './values-compiler.ts';
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
  data: Array<{ value: string; facts: number }>;
  metadata: Record<string, unknown>;
  warnings?: Array<{ code: string; message: string }>;
}

/**
 * A dimension's values in one business, for a type-ahead: resolve the period (none: all time),
 * pick the cheapest source that counts them exactly, run one statement under the query
 * admission and time budget, and the result cache at the projection's watermark.
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
  const compiled = compileValues(
    { business: input.business, dimension: input.dimension, prefix, period, limit: input.limit },
    source,
  );
  const executor =
    deps.executor ??
    new QueryExecutor({
      ...deps,
      limits: { timeoutMs: deps.timeoutMs, maxMemoryBytes: deps.maxMemoryBytes },
    });
  const run = executor.begin({
    signal: ctx.signal,
    principal: ctx.principal ?? 'anonymous',
    useCache: ctx.useCache ?? true,
    watermark: freshness.watermark,
  });
  let execution: Awaited<ReturnType<typeof run.execute>>;
  try {
    execution = await run.execute(compiled);
  } finally {
    run.close();
  }
  const data = execution.answer.data.map((row) => ({
    value: String(row.value),
    facts: Number(row.n),
  }));
  return {
    data,
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
      row_count: data.length,
      source,
      cache: execution.cache,
      data_as_of: freshness.dataAsOf.toISOString(),
      elapsed_ms: Math.round((performance.now() - started) * 100) / 100,
    },
    ...(execution.partial
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
