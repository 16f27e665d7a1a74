import { randomInt } from 'node:crypto';
import { ValidationError } from '../../http/errors.ts';
import type { QueryFilter, QueryRequest } from '../parse/query-parser.ts';
import { TooManyBucketsError } from '../period/buckets.ts';
import {
  type AnalyticsDeps,
  type QueryContext,
  type QueryResponse,
  runQuery,
} from '../query.service.ts';
import { type ForecastRequest, MAX_SEED } from './forecast.schemas.ts';
import { HORIZON_DAYS, simulateCompletion } from './monte-carlo.ts';

const QUANTILES = [0.5, 0.85, 0.95] as const;

type Percentiles<T> = { p50: T; p85: T; p95: T };

export interface ForecastAnswer {
  data: {
    open_tasks: number;
    throughput_per_day: number;
    completion: Percentiles<string | null>;
    completion_days: Percentiles<number | null>;
  };
  metadata: Record<string, unknown>;
  warnings?: Array<{ code: string; message: string }>;
}

/** The local calendar date of an instant in `timeZone` (YYYY-MM-DD). */
const localDate = (at: Date, timeZone: string) =>
  new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(at);

const plusDays = (date: string, days: number) => {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
};

/**
 * A query's validation problem placed in the forecast's body: the period and date range are
 * `history`, the filter the service adds for `project` is `project`.
 */
function inForecast(error: unknown, userFilters: number): unknown {
  if (error instanceof TooManyBucketsError) {
    return ValidationError.at(['body', 'history'], error.message, 'too_many_buckets');
  }
  if (!(error instanceof ValidationError)) return error;
  return new ValidationError(
    error.issues.map((issue) => {
      const [, member, ...rest] = issue.loc;
      if (member === 'period' || member === 'date_range') {
        return { ...issue, loc: ['body', 'history', ...rest] };
      }
      if (member === 'filters' && typeof rest[0] === 'number' && rest[0] >= userFilters) {
        return { ...issue, loc: ['body', 'project'] };
      }
      return issue;
    }),
  );
}

/**
 * When will the open work be done: the daily completions over the history (the `/query`
 * metric `tasks_completed` by `day`, same period resolution, filters and zone), the tasks open
 * now (`open_tasks` today), then a Monte Carlo over those days (monte-carlo.ts). Only whole
 * days make the throughput: the day still running, or one the projection has not reached, is
 * left out.
 */
export async function forecastCompletion(
  deps: AnalyticsDeps,
  input: ForecastRequest,
  ctx: QueryContext,
): Promise<ForecastAnswer> {
  const started = performance.now();
  const filters: QueryFilter[] = [
    ...(input.filters ?? []),
    ...(input.project === undefined
      ? []
      : [{ dimension: 'project', op: 'eq', values: [input.project] } as QueryFilter]),
  ];
  const common: Omit<QueryRequest, 'metrics'> = {
    business: input.business,
    ...(filters.length > 0 ? { filters } : {}),
    ...(input.timezone === undefined ? {} : { timezone: input.timezone }),
  };
  const history: Partial<QueryRequest> =
    typeof input.history === 'string' ? { period: input.history } : { date_range: input.history };
  const settled = await Promise.allSettled([
    runQuery(
      deps,
      { ...common, ...history, metrics: ['tasks_completed'], dimensions: ['day'] },
      ctx,
    ),
    runQuery(deps, { ...common, metrics: ['open_tasks'], period: 'today' }, ctx),
  ]);
  // The history's refusal first, whichever query failed sooner: a bad history is a 422
  // whatever else is wrong, as `/query` checks the request before it looks anything up.
  const [past, now] = settled.map((run) => {
    if (run.status === 'rejected') throw inForecast(run.reason, input.filters?.length ?? 0);
    return run.value;
  }) as [QueryResponse, QueryResponse];
  const period = (past.metadata.query as { period: Record<string, string> }).period;
  const zone = period.timezone as string;
  const incomplete = past.metadata.incomplete_from as string | null;
  const firstIncomplete = incomplete === null ? null : localDate(new Date(incomplete), zone);
  const daily = past.data
    .filter((row) => firstIncomplete === null || String(row.day) < firstIncomplete)
    .map((row) => Number(row.tasks_completed));
  const open = Number(now.data[0]?.open_tasks ?? 0);
  const seed = input.seed ?? randomInt(MAX_SEED + 1);
  // Without a whole day there is no throughput to draw from: nothing open is done today,
  // anything open is never done within the horizon.
  const days =
    daily.length === 0
      ? QUANTILES.map(() => (open === 0 ? 0 : null))
      : simulateCompletion({ daily, open, trials: input.trials, seed, quantiles: QUANTILES });
  const today = localDate(deps.now(), zone);
  const [p50, p85, p95] = days;
  const completionDays = { p50: p50 ?? null, p85: p85 ?? null, p95: p95 ?? null };
  const dateOf = (d: number | null) => (d === null ? null : plusDays(today, d));
  // Both statements may warn alike (stale data): each code once.
  const warnings: Array<{ code: string; message: string }> = [
    ...new Map(
      [...(past.warnings ?? []), ...(now.warnings ?? [])].map(({ code, message }) => [
        code,
        { code, message },
      ]),
    ).values(),
  ];
  if (daily.length === 0) {
    warnings.push({
      code: 'empty_history',
      message:
        'The history holds no whole day yet (today is still running): choose a period or range that ends before today',
    });
  } else if (days.some((d) => d === null)) {
    warnings.push({
      code: 'beyond_horizon',
      message: `Some simulated futures were not done within ${HORIZON_DAYS} days; their percentiles are null`,
    });
  }
  return {
    data: {
      open_tasks: open,
      throughput_per_day:
        daily.length === 0
          ? 0
          : Math.round((daily.reduce((a, b) => a + b, 0) / daily.length) * 1e4) / 1e4,
      completion: {
        p50: dateOf(completionDays.p50),
        p85: dateOf(completionDays.p85),
        p95: dateOf(completionDays.p95),
      },
      completion_days: completionDays,
    },
    metadata: {
      business: input.business,
      history: {
        name: period.name,
        from: period.from,
        to: period.to,
        timezone: zone,
        days: daily.length,
      },
      trials: input.trials,
      seed,
      horizon_days: HORIZON_DAYS,
      data_as_of: past.metadata.data_as_of,
      elapsed_ms: Math.round((performance.now() - started) * 100) / 100,
    },
    ...(warnings.length > 0 ? { warnings } : {}),
  };
}
