import { ValidationError } from '../platform/errors.ts';
import type { DimensionName, MetricName } from './catalog.ts';
import { DEFAULT_PERIOD, isValidTimezone, type PeriodName } from './period.ts';

/** The request body after schema validation. */
export interface QueryRequest {
  metrics: MetricName[];
  dimensions?: DimensionName[];
  period?: PeriodName;
  business?: string;
  timezone?: string;
}

/** A query with every default applied: what the compiler works from. */
export interface AnalyticsQuery {
  metrics: MetricName[];
  dimensions: DimensionName[];
  period: PeriodName;
  timezone: string;
  /** null: every business the caller may read. */
  business: string | null;
}

export function parseQuery(request: QueryRequest): AnalyticsQuery {
  const timezone = request.timezone ?? 'UTC';
  if (!isValidTimezone(timezone)) {
    throw ValidationError.at(
      ['body', 'timezone'],
      `Unknown time zone '${timezone}'; use an IANA name such as 'Europe/Paris'`,
      'timezone',
    );
  }
  return {
    metrics: request.metrics,
    dimensions: request.dimensions ?? [],
    period: request.period ?? DEFAULT_PERIOD,
    timezone,
    business: request.business ?? null,
  };
}
