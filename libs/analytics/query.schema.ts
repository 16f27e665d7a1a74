import type { JsonSchema } from '../platform/validation.ts';
import { DIMENSION_NAMES, METRIC_NAMES } from './catalog.ts';
import { PERIODS } from './period.ts';

export const MAX_METRICS = 20;
export const MAX_DIMENSIONS = 5;
export const MAX_FILTERS = 10;
export const MAX_FILTER_VALUES = 100;
/** The schema's ceiling; the configured `CAIRN_QUERY_MAX_ROWS` is checked by the parser. */
export const LIMIT_CEILING = 1_000_000;

export const FILTER_OPS = ['eq', 'neq', 'in', 'not_in'] as const;
export const DIRECTIONS = ['asc', 'desc'] as const;

const filter: JsonSchema = {
  type: 'object',
  properties: {
    dimension: { type: 'string', enum: DIMENSION_NAMES },
    op: { type: 'string', enum: FILTER_OPS },
    values: {
      type: 'array',
      items: { type: 'string', maxLength: 200 },
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
    business: { type: 'string', minLength: 1, maxLength: 100 },
    timezone: { type: 'string', minLength: 1, maxLength: 64 },
    filters: { type: 'array', items: filter, maxItems: MAX_FILTERS },
    order_by: { type: 'array', items: orderBy, maxItems: MAX_METRICS + MAX_DIMENSIONS },
    limit: { type: 'integer', minimum: 1, maximum: LIMIT_CEILING },
  },
  required: ['metrics'],
  additionalProperties: false,
};
