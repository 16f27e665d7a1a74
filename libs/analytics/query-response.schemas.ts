import type { JsonSchema } from '../http/validation.ts';
import {
  DIMENSION_NAMES,
  DIMENSIONS,
  METRIC_NAMES,
  METRICS,
  type MetricName,
  noneLabel,
} from './catalog/catalog.ts';
import { FILTER_OPS, MAX_ANY_DEPTH } from './catalog/filter-ops.ts';
import { DIRECTIONS, FILLS, INCLUSIONS } from './parse/query.schemas.ts';
import { COMPARE_MODES } from './period/comparison-period.ts';
import { PERIODS, WEEK_STARTS } from './period/period.ts';

/**
 * The answers of `/query` and `/query/catalog` as JSON Schema, built from the catalog so that a
 * generated client types each row member as the catalog describes it.
 */

const nullable = (schema: JsonSchema): JsonSchema => ({
  ...schema,
  type: [schema.type as string, 'null'],
});
const instant = { type: 'string', format: 'date-time' };
const integer = { type: 'integer', minimum: 0 };

/**
 * A metric's value: null where its catalog entry is undefined (empty), unmeasured (state in the
 * future), or not reached within the time budget (a `partial_result` answer names it).
 */
function metricValue(name: MetricName): JsonSchema {
  const metric = METRICS[name];
  const schema: JsonSchema = {
    type: metric.type,
    description: `${metric.description} Unit: ${metric.unit}. Null where it is undefined, not yet measurable, or not reached within the time budget.`,
    ...(metric.unit === 'ratio' ? { minimum: 0, maximum: 1 } : {}),
  };
  return nullable(schema);
}

const metricValues = (describe: (name: MetricName) => JsonSchema, description: string) => ({
  type: 'object',
  description,
  properties: Object.fromEntries(METRIC_NAMES.map((name) => [name, describe(name)])),
  additionalProperties: false,
});

const DIMENSION_FORMATS = {
  date: { type: 'string', format: 'date' },
  'date-time': { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:00:00[+-]\\d{2}:\\d{2}$' },
  string: { type: 'string' },
} as const;

const row: JsonSchema = {
  type: 'object',
  description:
    'One member per requested dimension and metric, named as requested; with `compare`, also `comparison` and `change`.',
  properties: {
    ...Object.fromEntries(
      DIMENSION_NAMES.map((name) => {
        const schema = {
          ...DIMENSION_FORMATS[DIMENSIONS[name].type],
          description: DIMENSIONS[name].description,
        };
        return [name, noneLabel(name) === undefined ? schema : nullable(schema)];
      }),
    ),
    ...Object.fromEntries(METRIC_NAMES.map((name) => [name, metricValue(name)])),
    comparison: metricValues(
      metricValue,
      'The same metrics for the same labels in the comparison period (for a time dimension, the bucket at the same position).',
    ),
    change: metricValues(
      () => ({ type: ['number', 'null'] }),
      'Relative change from `comparison` to the row: (row − comparison) / comparison; null where the comparison is 0 or either is null.',
    ),
  },
  additionalProperties: false,
};

const period = {
  type: 'object',
  properties: {
    name: { type: 'string', enum: [...PERIODS, 'custom'] },
    from: instant,
    to: instant,
    timezone: { type: 'string' },
  },
  required: ['name', 'from', 'to', 'timezone'],
  additionalProperties: false,
};

const resolvedCondition: JsonSchema = {
  type: 'object',
  properties: {
    dimension: { type: 'string', enum: DIMENSION_NAMES },
    op: { type: 'string', enum: FILTER_OPS },
    values: { type: 'array', items: { type: ['string', 'null'] } },
  },
  required: ['dimension', 'op', 'values'],
  additionalProperties: false,
};

/** A filter element as sent: a condition, or a group `{any}` of elements one level down. */
const resolvedFilter = (depth: number): JsonSchema => ({
  anyOf: [
    resolvedCondition,
    {
      type: 'object',
      properties: {
        any: {
          type: 'array',
          items: depth < MAX_ANY_DEPTH ? resolvedFilter(depth + 1) : resolvedCondition,
        },
      },
      required: ['any'],
      additionalProperties: false,
    },
  ],
});

const resolvedQuery = {
  type: 'object',
  description: 'The query as run: every default applied, the period resolved to instants.',
  properties: {
    metrics: { type: 'array', items: { type: 'string', enum: METRIC_NAMES } },
    dimensions: { type: 'array', items: { type: 'string', enum: DIMENSION_NAMES } },
    period,
    business: { type: ['string', 'null'] },
    filters: { type: 'array', items: resolvedFilter(1) },
    order_by: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          field: { type: 'string', enum: [...METRIC_NAMES, ...DIMENSION_NAMES] },
          direction: { type: 'string', enum: DIRECTIONS },
        },
        required: ['field', 'direction'],
        additionalProperties: false,
      },
    },
    limit: { type: ['integer', 'null'] },
    offset: integer,
    compare: { type: ['string', 'null'], enum: [...COMPARE_MODES, null] },
    include: { type: 'array', items: { type: 'string', enum: INCLUSIONS } },
    week_start: {
      type: 'string',
      enum: WEEK_STARTS,
      description: 'The day `week` buckets and the week periods start on.',
    },
    fill: {
      type: ['string', 'null'],
      enum: [...FILLS, null],
      description: '`zero` when every label combination was given every bucket, else null.',
    },
  },
  required: [
    'metrics',
    'dimensions',
    'period',
    'business',
    'filters',
    'order_by',
    'limit',
    'offset',
    'compare',
    'include',
    'week_start',
    'fill',
  ],
  additionalProperties: false,
};

const column = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    kind: { type: 'string', enum: ['dimension', 'metric'] },
    type: { type: 'string', enum: ['date', 'date-time', 'string', 'integer', 'number'] },
    unit: { type: ['string', 'null'] },
    description: { type: 'string' },
  },
  required: ['name', 'kind', 'type', 'unit', 'description'],
  additionalProperties: false,
};

const metadata = {
  type: 'object',
  properties: {
    query: resolvedQuery,
    columns: { type: 'array', items: column },
    row_count: integer,
    total_rows: { ...integer, description: 'Rows the query has in all, across every page.' },
    elapsed_ms: { type: 'number', minimum: 0 },
    rows_read: {
      ...integer,
      description:
        "Rows of the caller's own businesses in the ranges the query's statements read: for each statement, its businesses' facts in the time range it scans (state metrics read all history up to the last instant measured), or its rows of the rollup it reads in that range, counted once merged (one per slot and label set); a range read by two statements counts twice. Other businesses' data never moves it. 0 for a statement answered from the cache (nothing was read): 0 when `cache` is `hit`.",
    },
    bytes_read: {
      ...integer,
      description:
        'Size of those rows, counting only the columns each statement names: a string by its length in bytes, an instant or a number by its width (8; 4 for a date or a rollup slot), a rollup value column 8.',
    },
    data_as_of: { ...instant, description: 'Every fact before this instant is included.' },
    query_id: { type: 'string' },
    incomplete_from: {
      type: ['string', 'null'],
      format: 'date-time',
      description:
        'Start of the first time bucket (or of the period) not yet complete: it contains now, or ends after `data_as_of`. Null when all are complete.',
    },
    comparison: {
      type: 'object',
      properties: {
        period: {
          type: 'object',
          properties: { from: instant, to: instant },
          required: ['from', 'to'],
          additionalProperties: false,
        },
        cut_at_elapsed: {
          type: 'boolean',
          description:
            'The current period runs past now, so the comparison stops at the same elapsed offset.',
        },
      },
      required: ['period', 'cut_at_elapsed'],
      additionalProperties: false,
    },
    totals: metricValues(
      metricValue,
      'The metrics over the whole filtered period, computed, never summed.',
    ),
    totals_comparison: metricValues(metricValue, 'The totals of the comparison period.'),
    source: {
      type: 'string',
      description: 'What answered: `facts`, or a rollup table (`rollup_…`).',
    },
    cache: {
      type: 'string',
      enum: ['hit', 'miss', 'coalesced'],
      description:
        '`hit`: the answer was kept from an earlier request and still holds (no fact projected since for the businesses it reads, no boundary of the answer crossed by the clock). `coalesced`: an identical query was running; this answer is its answer. `miss`: computed for this request.',
    },
  },
  required: [
    'query',
    'columns',
    'row_count',
    'total_rows',
    'elapsed_ms',
    'rows_read',
    'bytes_read',
    'data_as_of',
    'query_id',
    'incomplete_from',
  ],
  additionalProperties: false,
};

const warning = (code: string, description: string, extra: Record<string, JsonSchema>) => ({
  type: 'object',
  description,
  properties: { code: { type: 'string', const: code }, message: { type: 'string' }, ...extra },
  required: ['code', 'message', ...Object.keys(extra)],
  additionalProperties: false,
});

export const queryResponse: JsonSchema = {
  type: 'object',
  properties: {
    data: { type: 'array', items: row },
    metadata,
    warnings: {
      type: 'array',
      items: {
        oneOf: [
          warning('result_truncated', 'The row cap cut the answer.', {
            returned_rows: integer,
            total_rows: integer,
          }),
          warning(
            'partial_result',
            'The time budget ran out; numbers may be partial. What a statement did not reach is null, never 0: `metrics` names the metrics whose rows or comparison may be null or cover only the facts read, `totals` whether the totals may.',
            {
              timeout_ms: integer,
              metrics: { type: 'array', items: { type: 'string', enum: METRIC_NAMES } },
              totals: { type: 'boolean' },
            },
          ),
          warning('stale_data', 'The newest facts are not yet projected.', { lag_ms: integer }),
          warning(
            'unknown_filter_value',
            'An `eq`/`in` filter names labels of `dimension` the business never had (compared exactly, letter case included): no row matches those `values`. Checked by one lookup of the named values in the business’s facts, only when such a filter is given.',
            {
              dimension: { type: 'string', enum: DIMENSION_NAMES },
              values: { type: 'array', items: { type: 'string' }, minItems: 1 },
            },
          ),
        ],
      },
    },
  },
  required: ['data', 'metadata'],
  additionalProperties: false,
};

const named = (extra: Record<string, JsonSchema>) => ({
  type: 'array',
  items: {
    type: 'object',
    properties: { name: { type: 'string' }, description: { type: 'string' }, ...extra },
    required: ['name', 'description', ...Object.keys(extra)],
    additionalProperties: false,
  },
});

export const catalogResponse: JsonSchema = {
  type: 'object',
  properties: {
    data: {
      type: 'object',
      properties: {
        metrics: named({
          type: { type: 'string', enum: ['integer', 'number'] },
          unit: { type: 'string' },
          measured: { type: 'string', enum: ['during_period', 'at_period_end'] },
          empty: { type: ['integer', 'null'] },
        }),
        dimensions: named({
          type: { type: 'string', enum: ['date', 'date-time', 'string'] },
          time: { type: 'boolean' },
          nullable: { type: 'boolean' },
        }),
        periods: named({ default: { type: 'boolean' } }),
        filter_ops: { type: 'array', items: { type: 'string', enum: FILTER_OPS } },
        order_directions: { type: 'array', items: { type: 'string', enum: DIRECTIONS } },
        compare: { type: 'array', items: { type: 'string', enum: COMPARE_MODES } },
        include: { type: 'array', items: { type: 'string', enum: INCLUSIONS } },
        default_timezone: { type: 'string' },
        max_buckets: integer,
        max_date_range_years: integer,
      },
      required: [
        'metrics',
        'dimensions',
        'periods',
        'filter_ops',
        'order_directions',
        'compare',
        'include',
        'default_timezone',
        'max_buckets',
        'max_date_range_years',
      ],
      additionalProperties: false,
    },
    meta: { $ref: '#/components/schemas/ResponseMeta' },
  },
  required: ['data', 'meta'],
  additionalProperties: false,
};
