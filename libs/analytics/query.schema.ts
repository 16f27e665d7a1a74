import type { JsonSchema } from '../http/validation.ts';
import { DIMENSION_NAMES, METRIC_NAMES } from './catalog.ts';
import { FILTER_OPS } from './filter-ops.ts';
import { PERIODS } from './period.ts';

export const MAX_METRICS = 20;
export const MAX_DIMENSIONS = 5;
export const MAX_FILTERS = 10;
export const MAX_FILTER_VALUES = 100;
/** The schema's ceiling; the configured `CAIRN_QUERY_MAX_ROWS` is checked by the parser. */
export const LIMIT_CEILING = 1_000_000;

export const DIRECTIONS = ['asc', 'desc'] as const;
export const COMPARE_MODES = ['previous_period', 'previous_year'] as const;
export const INCLUSIONS = ['totals'] as const;
export type CompareMode = (typeof COMPARE_MODES)[number];
export type Inclusion = (typeof INCLUSIONS)[number];
/** Far past any result the row cap lets through, and within ClickHouse's UInt64. */
export const OFFSET_CEILING = 1_000_000_000;

const filter: JsonSchema = {
  type: 'object',
  properties: {
    dimension: { type: 'string', enum: DIMENSION_NAMES },
    op: { type: 'string', enum: FILTER_OPS },
    values: {
      type: 'array',
      // null: rows without the label (a task without a project).
      items: { type: ['string', 'null'], maxLength: 200 },
      minItems: 1,
      maxItems: MAX_FILTER_VALUES,
    },
  },
  required: ['dimension', 'op', 'values'],
  additionalProperties: false,
};

const orderBy: JsonSchema = {
  type: 'object',
  properties: {
    field: { type: 'string', enum: [...METRIC_NAMES, ...DIMENSION_NAMES] },
    direction: { type: 'string', enum: DIRECTIONS, default: 'asc' },
  },
  required: ['field'],
  additionalProperties: false,
};

export const queryBody: JsonSchema = {
  type: 'object',
  properties: {
    metrics: {
      type: 'array',
      items: { type: 'string', enum: METRIC_NAMES },
      minItems: 1,
      maxItems: MAX_METRICS,
      uniqueItems: true,
    },
    dimensions: {
      type: 'array',
      items: { type: 'string', enum: DIMENSION_NAMES },
      maxItems: MAX_DIMENSIONS,
      uniqueItems: true,
    },
    period: { type: 'string', enum: PERIODS },
    date_range: {
      type: 'array',
      description:
        'Instead of `period`: two dates `YYYY-MM-DD` (whole days in `timezone`, both included) or two RFC 3339 date-times with offsets (half-open), at most 10 years apart.',
      items: { type: 'string', minLength: 10, maxLength: 40 },
      minItems: 2,
      maxItems: 2,
    },
    business: { type: 'string', minLength: 1, maxLength: 100 },
    timezone: { type: 'string', minLength: 1, maxLength: 64 },
    filters: { type: 'array', items: filter, maxItems: MAX_FILTERS },
    order_by: { type: 'array', items: orderBy, maxItems: MAX_METRICS + MAX_DIMENSIONS },
    limit: { type: 'integer', minimum: 1, maximum: LIMIT_CEILING },
    offset: { type: 'integer', minimum: 0, maximum: OFFSET_CEILING, default: 0 },
    compare: {
      type: 'string',
      enum: COMPARE_MODES,
      description:
        'Also compute each row for the previous period (or the same period a year before); a period still running is compared with the same elapsed part.',
    },
    include: {
      type: 'array',
      items: { type: 'string', enum: INCLUSIONS },
      uniqueItems: true,
      maxItems: INCLUSIONS.length,
    },
  },
  required: ['metrics'],
  additionalProperties: false,
};
