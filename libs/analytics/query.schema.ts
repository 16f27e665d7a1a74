import type { JsonSchema } from '../platform/validation.ts';
import { DIMENSION_NAMES, METRIC_NAMES } from './catalog.ts';
import { PERIODS } from './period.ts';

export const MAX_METRICS = 20;
export const MAX_DIMENSIONS = 5;

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
  },
  required: ['metrics'],
  additionalProperties: false,
};
