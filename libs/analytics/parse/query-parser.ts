import { ValidationError, type ValidationIssue } from '../../http/errors.ts';
import {
  DIMENSIONS,
  type DimensionName,
  type MetricName,
  noneLabel,
  TIME_DIMENSIONS,
} from '../catalog/catalog.ts';
import { FILTER_OPERATORS } from '../catalog/filter-ops.ts';
import type { CompareMode } from '../period/comparison-period.ts';
import { type DateRange, type DateRangeProblem, parseDateRange } from '../period/date-range.ts';
import {
  DEFAULT_PERIOD,
  DEFAULT_WEEK_START,
  type PeriodName,
  type WeekStart,
} from '../period/period.ts';
import { engineZone } from '../period/time-zones.ts';
import type { Fill, Inclusion } from './query.schemas.ts';
import { LIMIT_CEILING } from './query.schemas.ts';
import { type FilterCondition, isGroup, type QueryFilter } from './query-filters.ts';

export type { FilterCondition, FilterGroup, QueryFilter } from './query-filters.ts';

export interface QueryOrder {
  field: MetricName | DimensionName;
  direction: 'asc' | 'desc';
}

/** The request body after schema validation. */
export interface QueryRequest {
  metrics: MetricName[];
  dimensions?: DimensionName[];
  period?: PeriodName;
  date_range?: [string, string];
  business?: string;
  timezone?: string;
  filters?: QueryFilter[];
  order_by?: Array<{ field: MetricName | DimensionName; direction?: 'asc' | 'desc' }>;
  limit?: number;
  offset?: number;
  compare?: CompareMode;
  include?: Inclusion[];
  week_start?: WeekStart;
  fill?: Fill;
}

/** A query with every default applied and every cross-field rule checked. */
export interface AnalyticsQuery {
  metrics: MetricName[];
  dimensions: DimensionName[];
  /** A named period, or the caller's `date_range`. */
  period: PeriodName | DateRange;
  /**
   * The zone's name as ClickHouse loads it (its IANA name where the engine knows it, else the
   * older alias ICU resolves to); `ianaTimezone` gives the name the answer states.
   */
  timezone: string;
  /** null: every business the caller may read. */
  business: string | null;
  filters: QueryFilter[];
  orderBy: QueryOrder[];
  /** The caller's own row limit; null means the server's cap. */
  limit: number | null;
  /** Rows skipped before the first returned, in the stable order. */
  offset: number;
  compare: CompareMode | null;
  /** `include: ["totals"]`: the metrics over the whole filtered period too. */
  totals: boolean;
  /** The day `week` buckets and the week periods start on. */
  weekStart: WeekStart;
  /**
   * `zero`: every label combination in the rows gets every time bucket; null leaves label
   * combinations to the buckets they have data in.
   */
  fill: Fill | null;
}

export interface ParseOptions {
  /** `CAIRN_QUERY_MAX_ROWS`: no caller may ask for more. */
  maxRows?: number;
  /** Zones the running ClickHouse can load (see time-zones.ts); unset: whatever Intl knows. */
  zones?: ReadonlySet<string>;
}

const TIME_DIMENSION_LIST = TIME_DIMENSIONS.join(', ');

/** Checks what a JSON schema cannot express, reporting every problem at its own `loc`. */
export function parseQuery(request: QueryRequest, options: ParseOptions = {}): AnalyticsQuery {
  const issues: ValidationIssue[] = [];
  const resolvedZone = engineZone(request.timezone ?? 'UTC', options.zones);
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
  if (request.fill !== undefined && timeDimensions.length === 0) {
    issues.push({
      loc: ['body', 'fill'],
      msg: `fill '${request.fill}' gives every label combination every time bucket: add a time dimension (${TIME_DIMENSION_LIST}) to dimensions, or leave fill out`,
      type: 'value_error',
    });
  }
  const filters = request.filters ?? [];
  filters.forEach((filter, i) => {
    checkFilter(filter, ['body', 'filters', i], issues);
  });
  let period: PeriodName | DateRange = request.period ?? DEFAULT_PERIOD;
  if (request.date_range !== undefined) {
    if (request.period !== undefined) {
      issues.push({
        loc: ['body', 'date_range'],
        msg: 'Give either period or date_range, not both',
        type: 'value_error',
      });
    }
    const problems: DateRangeProblem[] = [];
    period = parseDateRange(request.date_range, problems) ?? period;
    for (const { item, msg, type } of problems) {
      issues.push({
        loc: ['body', 'date_range', ...(item === undefined ? [] : [item])],
        msg,
        type,
      });
    }
  }
  if (request.compare !== undefined && period === 'all_time') {
    issues.push({
      loc: ['body', 'compare'],
      msg: 'all_time has no previous period or year to compare with',
      type: 'value_error',
    });
  }
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
    period,
    timezone,
    business: request.business ?? null,
    filters,
    orderBy,
    limit: request.limit ?? null,
    offset: request.offset ?? 0,
    compare: request.compare ?? null,
    totals: request.include?.includes('totals') ?? false,
    weekStart: request.week_start ?? DEFAULT_WEEK_START,
    fill: request.fill ?? null,
  };
}

/** A filter element's rules the schema only publishes, each reported at its own `loc`. */
function checkFilter(
  filter: QueryFilter,
  loc: Array<string | number>,
  issues: ValidationIssue[],
): void {
  if (isGroup(filter)) {
    filter.any.forEach((element, i) => {
      checkFilter(element, [...loc, 'any', i], issues);
    });
    return;
  }
  checkCondition(filter, loc, issues);
}

function checkCondition(
  filter: FilterCondition,
  loc: Array<string | number>,
  issues: ValidationIssue[],
): void {
  const operator = FILTER_OPERATORS[filter.op];
  if (operator.oneValue && filter.values.length !== 1) {
    issues.push({
      loc: [...loc, 'values'],
      msg: `Operator '${filter.op}' takes exactly one value`,
      type: 'value_error',
    });
  }
  filter.values.forEach((value, j) => {
    if (operator.substring && (value === null || value === '')) {
      issues.push({
        loc: [...loc, 'values', j],
        msg: `Operator '${filter.op}' takes non-empty text: a null label holds no text`,
        type: 'value_error',
      });
    } else if (value === null && noneLabel(filter.dimension) === undefined) {
      issues.push({
        loc: [...loc, 'values', j],
        msg: `Every row has a '${filter.dimension}': null matches nothing here`,
        type: 'value_error',
      });
    }
  });
}
