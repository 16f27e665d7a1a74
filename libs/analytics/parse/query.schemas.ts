import { enforcedInCode } from '../../http/json-schema.ts';
import { digitRange, group } from '../../http/text-patterns.ts';
import type { JsonSchema } from '../../http/validation.ts';
import { DIMENSION_NAMES, METRIC_NAMES, noneLabel, TIME_DIMENSIONS } from '../catalog/catalog.ts';
import { FILTER_OPERATORS, FILTER_OPS, MAX_ANY_DEPTH } from '../catalog/filter-ops.ts';
import { MAX_BUCKETS } from '../period/buckets.ts';
import { COMPARE_MODES } from '../period/comparison-period.ts';
import { PERIODS } from '../period/period.ts';

export const MAX_METRICS = 20;
export const MAX_DIMENSIONS = 5;
export const MAX_FILTERS = 10;
export const MAX_FILTER_VALUES = 100;
/** The highest `CAIRN_QUERY_MAX_ROWS` may be; the schema states the configured one. */
export const LIMIT_CEILING = 1_000_000;

export const DIRECTIONS = ['asc', 'desc'] as const;
export const INCLUSIONS = ['totals'] as const;
export type Inclusion = (typeof INCLUSIONS)[number];
/** Far past any result the row cap lets through, and within ClickHouse's UInt64. */
export const OFFSET_CEILING = 1_000_000_000;

/**
 * What the parser checks beyond Ajv, stated for the published document (see ENFORCED_IN_CODE).
 * `date_range`: two dates, or two date-times, in the years date-range.ts allows.
 */
const RANGE_YEARS = group(digitRange('1900', '2299'));
export const RANGE_DATE_PATTERN = `^${RANGE_YEARS}-[0-9]{2}-[0-9]{2}$`;
// Offsets of at most ±14:00, as isInstant (date-time-format.ts) takes.
export const RANGE_DATE_TIME_PATTERN = `^${RANGE_YEARS}-[0-9]{2}-[0-9]{2}[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,9})?([Zz]|[+-]((0[0-9]|1[0-3]):[0-5][0-9]|14:00))$`;
/**
 * The names the parser may accept: IANA names and aliases, in any case, as Intl reads them, of
 * zones the running ClickHouse can load too. That set depends on the runtime's ICU and the
 * engine, and names are matched without regard to case, so the document gives their shape:
 * up to three `/`-separated parts, each a letter then letters, digits, `_`, `+` or `-`.
 */
export const TIMEZONE_PATTERN = '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z][A-Za-z0-9_+-]*){0,2}$';

const ONE_VALUE_OPS = FILTER_OPS.filter((op) => FILTER_OPERATORS[op].oneValue);
const SUBSTRING_OPS = FILTER_OPS.filter((op) => FILTER_OPERATORS[op].substring);
const WITHOUT_NONE = DIMENSION_NAMES.filter((name) => noneLabel(name) === undefined);
/** Elements of one `any` group at most: groups nest, and the conditions multiply with them. */
export const MAX_ANY_ELEMENTS = 5;

const conditionProperties = {
  dimension: { type: 'string', enum: DIMENSION_NAMES },
  op: { type: 'string', enum: FILTER_OPS },
  values: {
    type: 'array',
    // null: rows without the label (a task without a project).
    items: { type: ['string', 'null'], maxLength: 200 },
    minItems: 1,
    maxItems: MAX_FILTER_VALUES,
  },
};

// Each an implication, "A, then B", written as "not A, or B". A group has no `op` or
// `dimension`, so each holds of it too.
const conditionRules: JsonSchema = enforcedInCode({
  allOf: [
    {
      anyOf: [
        { not: { properties: { op: { enum: ONE_VALUE_OPS } } } },
        { properties: { values: { maxItems: 1 } } },
      ],
    },
    // null matches rows without the label: only dimensions that can lack one take it.
    {
      anyOf: [
        { not: { properties: { dimension: { enum: WITHOUT_NONE } } } },
        { properties: { values: { items: { type: 'string' } } } },
      ],
    },
    // A substring is text: a null label holds none, and the empty text is in every label.
    {
      anyOf: [
        { not: { properties: { op: { enum: SUBSTRING_OPS } } } },
        { properties: { values: { items: { type: 'string', minLength: 1 } } } },
      ],
    },
  ],
});

/** A condition alone: what a group at the deepest level holds. */
const condition: JsonSchema = {
  type: 'object',
  description: 'Rows whose `dimension` compares with `values` by `op`.',
  properties: conditionProperties,
  required: ['dimension', 'op', 'values'],
  additionalProperties: false,
  ...conditionRules,
};

/**
 * A filter element `depth` levels down (1: an item of `filters`): a condition, or
 * `{"any": [element, …]}` whose elements are one level further down. Written out level by
 * level rather than by reference, so the nesting limit is part of the schema; one object with
 * both shapes' members (`if` a group, `then` only `any`, `else` a condition's three) keeps each
 * problem at its own place, inside the group.
 */
const filterElement = (depth: number): JsonSchema => ({
  type: 'object',
  ...(depth === 1
    ? {
        description:
          'A condition, or `{"any": [element, …]}`: rows passing any of its elements (groups nest 3 deep). `contains`/`not_contains` match part of a label, ignoring case; a null label contains nothing.',
      }
    : {}),
  properties: {
    ...conditionProperties,
    any: {
      type: 'array',
      items: depth < MAX_ANY_DEPTH ? filterElement(depth + 1) : condition,
      minItems: 1,
      maxItems: MAX_ANY_ELEMENTS,
    },
  },
  additionalProperties: false,
  // Each branch names the members it requires (`true`: the schema above says what they hold).
  if: { properties: { any: true }, required: ['any'] },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else, never awaited.
  then: { properties: { any: true }, required: ['any'], maxProperties: 1 },
  else: {
    properties: { dimension: true, op: true, values: true },
    required: ['dimension', 'op', 'values'],
  },
  ...conditionRules,
});
const filter: JsonSchema = filterElement(1);

const orderBy: JsonSchema = {
  type: 'object',
  properties: {
    field: { type: 'string', enum: [...METRIC_NAMES, ...DIMENSION_NAMES] },
    direction: { type: 'string', enum: DIRECTIONS, default: 'asc' },
  },
  required: ['field'],
  additionalProperties: false,
};

/**
 * `order_by` names each field at most once, and only a requested metric or dimension. Stated
 * over the finite catalog as one `not` of every way to break it (for each name: ordered by but
 * not requested, or ordered by twice), rather than an implication per name: code generators
 * type each `anyOf` in an `allOf` as a union, and a product of 22 unions is beyond them.
 */
const orderByBroken = (list: 'metrics' | 'dimensions', name: string): JsonSchema[] => {
  const byName = { required: ['field'], properties: { field: { const: name } } };
  return [
    {
      required: ['order_by'],
      properties: { order_by: { contains: byName } },
      not: { required: [list], properties: { [list]: { contains: { const: name } } } },
    },
    { required: ['order_by'], properties: { order_by: { contains: byName, minContains: 2 } } },
  ];
};
const ORDER_BY_RULE: JsonSchema = {
  not: {
    anyOf: [
      ...METRIC_NAMES.flatMap((name) => orderByBroken('metrics', name)),
      ...DIMENSION_NAMES.flatMap((name) => orderByBroken('dimensions', name)),
    ],
  },
};

/** The query body, with `limit` bounded by the instance's `CAIRN_QUERY_MAX_ROWS`. */
export const queryBodySchema = (maxRows: number = LIMIT_CEILING): JsonSchema => ({
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
      description: `At most one time dimension, whose buckets in the period number at most ${MAX_BUCKETS.toLocaleString('en')} (more is a 422 \`too_many_buckets\`: choose a coarser one or a shorter period).`,
      items: { type: 'string', enum: DIMENSION_NAMES },
      maxItems: MAX_DIMENSIONS,
      uniqueItems: true,
      // One bucket size per query.
      ...enforcedInCode({ not: { contains: { enum: TIME_DIMENSIONS }, minContains: 2 } }),
    },
    period: { type: 'string', enum: PERIODS },
    date_range: {
      type: 'array',
      description:
        'Instead of `period`: two dates `YYYY-MM-DD` (whole days in `timezone`, both included) or two RFC 3339 date-times with offsets (half-open), the first not after the second and at most 10 years apart.',
      items: { type: 'string', minLength: 10, maxLength: 40 },
      minItems: 2,
      maxItems: 2,
      ...enforcedInCode({
        anyOf: [
          { items: { format: 'date', pattern: RANGE_DATE_PATTERN } },
          { items: { format: 'date-time', pattern: RANGE_DATE_TIME_PATTERN } },
        ],
      }),
    },
    business: { type: 'string', minLength: 1, maxLength: 100 },
    timezone: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description:
        'An IANA time zone name (`Europe/Paris`; aliases and any letter case are read), one the service’s ICU and ClickHouse both know; default `UTC`.',
      ...enforcedInCode({ pattern: TIMEZONE_PATTERN }),
    },
    filters: { type: 'array', items: filter, maxItems: MAX_FILTERS },
    order_by: { type: 'array', items: orderBy, maxItems: MAX_METRICS + MAX_DIMENSIONS },
    limit: { type: 'integer', minimum: 1, maximum: maxRows },
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
  ...enforcedInCode({
    allOf: [
      { not: { required: ['period', 'date_range'] } },
      // all_time has no previous period to compare with.
      { not: { required: ['period', 'compare'], properties: { period: { const: 'all_time' } } } },
      ORDER_BY_RULE,
    ],
  }),
});

export const queryBody: JsonSchema = queryBodySchema();
