import { businessName } from '../../auth/business-name.ts';
import { enforcedInCode } from '../../http/json-schema.ts';
import type { JsonSchema } from '../../http/validation.ts';
import { DIMENSIONS, type DimensionName } from '../catalog/catalog.ts';
import { canonicalTimezone, PERIODS, type PeriodName } from '../period/period.ts';
import { acceptedZoneNames, zonePattern } from '../period/time-zones.ts';

/**
 * Dimensions whose values a type-ahead lists: the labels a task carries. Time dimensions have
 * no list of values to suggest, and a business's only `business` value is itself.
 */
export const VALUE_DIMENSIONS = (Object.keys(DIMENSIONS) as DimensionName[]).filter(
  (name) => !DIMENSIONS[name].time && name !== 'business',
);
export type ValueDimension = 'project' | 'assignee' | 'status';

export const DEFAULT_VALUES_LIMIT = 20;
export const MAX_VALUES_LIMIT = 100;
export const MAX_PREFIX_LENGTH = 200;

export interface ValuesParams {
  business: string;
  dimension: ValueDimension;
}

export interface ValuesQuery {
  prefix?: string;
  period?: PeriodName;
  timezone?: string;
  limit: number;
}

export const valuesParams: JsonSchema = {
  type: 'object',
  properties: {
    business: { ...businessName, description: 'A business the token is bound to.' },
    dimension: {
      type: 'string',
      enum: VALUE_DIMENSIONS,
      description: 'A label dimension of the query catalog.',
    },
  },
  required: ['business', 'dimension'],
  additionalProperties: false,
};

/**
 * The zone `period` is read in, as the route reads it (see dimension-values.routes.ts): the
 * name Intl resolves it to must be one `zones` (the engine's) holds; unset, any Intl knows.
 */
export function valuesZone(
  timezone: string,
  zones: ReadonlySet<string> | undefined,
): string | null {
  const zone = canonicalTimezone(timezone);
  return zone !== null && (zones === undefined || zones.has(zone)) ? zone : null;
}

/** The query parameters, with `timezone` bounded by the zones the engine loads. */
export const valuesQuerySchema = (zones?: ReadonlySet<string>): JsonSchema => ({
  type: 'object',
  properties: {
    prefix: {
      type: 'string',
      maxLength: MAX_PREFIX_LENGTH,
      description:
        'Only values starting with this text, without regard to letter case; empty or absent: every value.',
    },
    period: {
      type: 'string',
      enum: PERIODS,
      description:
        'Only values carried by facts of this period (the `/query` periods); absent: all time.',
    },
    timezone: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description: 'The IANA time zone `period` is read in; default `UTC`.',
      ...enforcedInCode({
        pattern: zonePattern(acceptedZoneNames(zones, (name) => valuesZone(name, zones) !== null)),
      }),
    },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_VALUES_LIMIT,
      default: DEFAULT_VALUES_LIMIT,
      description: 'How many values at most, the most used first.',
    },
  },
  additionalProperties: false,
});

const resolvedPeriod: JsonSchema = {
  type: ['object', 'null'],
  description: 'The period the values were counted over, as resolved; null for all time.',
  properties: {
    name: { type: 'string', enum: PERIODS },
    from: { type: 'string', format: 'date-time' },
    to: { type: 'string', format: 'date-time' },
    timezone: { type: 'string' },
  },
  required: ['name', 'from', 'to', 'timezone'],
  additionalProperties: false,
};

export const valuesResponse: JsonSchema = {
  type: 'object',
  properties: {
    data: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          value: { type: 'string', description: 'A label of the dimension.' },
          facts: {
            type: 'integer',
            minimum: 1,
            description: 'How many facts (task changes, dependency changes) carry it.',
          },
        },
        required: ['value', 'facts'],
        additionalProperties: false,
      },
    },
    metadata: {
      type: 'object',
      properties: {
        business: { type: 'string' },
        dimension: { type: 'string', enum: VALUE_DIMENSIONS },
        prefix: { type: 'string' },
        period: resolvedPeriod,
        limit: { type: 'integer', minimum: 1, maximum: MAX_VALUES_LIMIT },
        row_count: { type: 'integer', minimum: 0 },
        source: {
          type: 'string',
          description: 'What the values were read from: a rollup (`rollup_…`) or `facts`.',
        },
        cache: { type: 'string', enum: ['hit', 'miss'] },
        data_as_of: { type: 'string', format: 'date-time' },
        elapsed_ms: { type: 'number', minimum: 0 },
      },
      required: [
        'business',
        'dimension',
        'prefix',
        'period',
        'limit',
        'row_count',
        'source',
        'cache',
        'data_as_of',
        'elapsed_ms',
      ],
      additionalProperties: false,
    },
  },
  required: ['data', 'metadata'],
  additionalProperties: false,
};
