import { ValidationError, type ValidationIssue } from '../platform/errors.ts';
import { DIMENSIONS, type DimensionName, type MetricName } from './catalog.ts';
import { canonicalTimezone, DEFAULT_PERIOD, type PeriodName } from './period.ts';
import { LIMIT_CEILING } from './query.schema.ts';

export type FilterOp = 'eq' | 'neq' | 'in' | 'not_in';

export interface QueryFilter {
  dimension: DimensionName;
  op: FilterOp;
  values: string[];
}

export interface QueryOrder {
  field: MetricName | DimensionName;
  direction: 'asc' | 'desc';
}

/** The request body after schema validation. */
export interface QueryRequest {
  metrics: MetricName[];
  dimensions?: DimensionName[];
  period?: PeriodName;
  business?: string;
  timezone?: string;
  filters?: QueryFilter[];
  order_by?: Array<{ field: MetricName | DimensionName; direction?: 'asc' | 'desc' }>;
  limit?: number;
}

/** A query with every default applied and every cross-field rule checked. */
export interface AnalyticsQuery {
  metrics: MetricName[];
  dimensions: DimensionName[];
  period: PeriodName;
  timezone: string;
  /** null: every business the caller may read. */
  business: string | null;
  filters: QueryFilter[];
  orderBy: QueryOrder[];
  /** The caller's own row limit; null means the server's cap. */
  limit: number | null;
}

export interface ParseOptions {
  /** `CAIRN_QUERY_MAX_ROWS`: no caller may ask for more. */
  maxRows?: number;
}

/** Checks what a JSON schema cannot express, reporting every problem at its own `loc`. */
export function parseQuery(request: QueryRequest, options: ParseOptions = {}): AnalyticsQuery {
  const issues: ValidationIssue[] = [];
  const resolvedZone = canonicalTimezone(request.timezone ?? 'UTC');
  const timezone = resolvedZone ?? 'UTC';
  if (resolvedZone === null) {
    issues.push({
      loc: ['body', 'timezone'],
      msg: `Unknown time zone '${request.timezone}'; use an IANA name such as 'Europe/Paris'`,
      type: 'timezone',
    });
  }
  const dimensions = request.dimensions ?? [];
  // State metrics are measured once per time bucket, so a query has at most one bucket size.
  const timeDimensions = dimensions.filter((name) => DIMENSIONS[name].time);
  if (timeDimensions.length > 1) {
    issues.push({
      loc: ['body', 'dimensions', dimensions.indexOf(timeDimensions[1] as DimensionName)],
      msg: `Use at most one time dimension (got ${timeDimensions.join(', ')})`,
      type: 'value_error',
    });
  }
  const filters = request.filters ?? [];
  filters.forEach((filter, i) => {
    if ((filter.op === 'eq' || filter.op === 'neq') && filter.values.length !== 1) {
      issues.push({
        loc: ['body', 'filters', i, 'values'],
        msg: `Operator '${filter.op}' takes exactly one value`,
        type: 'value_error',
      });
    }
  });
  const requested = new Set<string>([...request.metrics, ...dimensions]);
  const ordered = new Set<string>();
  const orderBy = (request.order_by ?? []).map((order, i): QueryOrder => {
    if (!requested.has(order.field)) {
      issues.push({
        loc: ['body', 'order_by', i, 'field'],
        msg: `Can only order by a requested metric or dimension, not '${order.field}'`,
        type: 'value_error',
      });
    } else if (ordered.has(order.field)) {
      issues.push({
        loc: ['body', 'order_by', i, 'field'],
        msg: `'${order.field}' is already ordered by`,
        type: 'value_error',
      });
    }
    ordered.add(order.field);
    return { field: order.field, direction: order.direction ?? 'asc' };
  });
  const maxRows = options.maxRows ?? LIMIT_CEILING;
  if (request.limit !== undefined && request.limit > maxRows) {
    issues.push({
      loc: ['body', 'limit'],
      msg: `Input should be less than or equal to ${maxRows}`,
      type: 'less_than_equal',
    });
  }
  if (issues.length > 0) throw new ValidationError(issues);
  return {
    metrics: request.metrics,
    dimensions,
    period: request.period ?? DEFAULT_PERIOD,
    timezone,
    business: request.business ?? null,
    filters,
    orderBy,
    limit: request.limit ?? null,
  };
}
