import { enforcedInCode } from '../../http/json-schema.ts';
import { calendarDate } from '../../http/text-patterns.ts';
import type { JsonSchema } from '../../http/validation.ts';
import { DIMENSION_NAMES, METRIC_NAMES, noneLabel, TIME_DIMENSIONS } from '../catalog/catalog.ts';
import { FILTER_OPERATORS, FILTER_OPS, MAX_ANY_DEPTH } from '../catalog/filter-ops.ts';
import { MAX_BUCKETS } from '../period/buckets.ts';
import { COMPARE_MODES } from '../period/comparison-period.ts';
import { PERIODS, WEEK_STARTS } from '../period/period.ts';
import { acceptedZoneNames, engineZone, zonePattern } from '../period/time-zones.ts';

export const MAX_METRICS = 20;
export const MAX_DIMENSIONS = 5;
export const MAX_FILTERS = 10;
export const MAX_FILTER_VALUES = 100;
/** The highest `CAIRN_QUERY_MAX_ROWS` may be; the schema states the configured one. */
export const LIMIT_CEILING = 1_000_000;

export const DIRECTIONS = ['asc', 'desc'] as const;
export const INCLUSIONS = ['totals'] as const;
export type Inclusion = (typeof INCLUSIONS)[number];
export const FILLS = ['zero'] as const;
export type Fill = (typeof FILLS)[number];
/** Far past any result the row cap lets through, and within ClickHouse's UInt64. */
export const OFFSET_CEILING = 1_000_000_000;

/**
 * What the parser checks beyond Ajv, stated for the published document (see ENFORCED_IN_CODE).
 * `date_range`: two dates, or two date-times, in the years date-range.ts allows.
 */
const RANGE_DAY = calendarDate('1900', '2299');
export const RANGE_DATE_PATTERN = `^${RANGE_DAY}$`;
// Offsets of at most ±14:00, as isInstant (date-time-format.ts) takes.
export const RANGE_DATE_TIME_PATTERN = `^${RANGE_DAY}[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,9})?([Zz]|[+-]((0[0-9]|1[0-3]):[0-5][0-9]|14:00))$`;
/**
 * The shape of every name the parser may accept (IANA names and aliases, in any case, as Intl
 * reads them): up to three `/`-separated parts, each a letter then letters, digits, `_`, `+` or
 * `-`. The document states the names themselves (queryZonePattern), which depend on the
 * runtime's ICU and the engine.
 */
export const TIMEZONE_PATTERN = '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z][A-Za-z0-9_+-]*){0,2}$';

const ONE_VALUE_OPS = FILTER_OPS.filter((op) => FILTER_OPERATORS[op].oneValue);
const SUBSTRING_OPS = FILTER_OPS.filter((op) => FILTER_OPERATORS[op].substring);
const WITHOUT_NONE = DIMENSION_NAMES.filter((name) => noneLabel(name) === undefined);
const LABEL_DIMENSIONS = DIMENSION_NAMES.filter((name) => !TIME_DIMENSIONS.includes(name));
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
const CONDITION_RULES: JsonSchema[] = [
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
];
const conditionRules: JsonSchema = enforcedInCode({ allOf: CONDITION_RULES });

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
  // The two shapes again as branches (in `allOf`, so that code generators, which leave `if`
  // alone, type the element as one of them): the `if` above still decides, so this adds nothing
  // a value must meet.
  ...enforcedInCode({
    allOf: [
      ...CONDITION_RULES,
      {
        anyOf: [
          {
            type: 'object',
            properties: { dimension: true, op: true, values: true },
            required: ['dimension', 'op', 'values'],
          },
          { type: 'object', properties: { any: true }, required: ['any'] },
        ],
      },
    ],
  }),
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
 * type each `anyOf` in an `allOf` as a union, and a product of 33 unions is beyond them. Test
 * generators that spell out every case of the rule (2^33) cannot take it either: see
 * .ci/schemathesis/cairn_hooks.py.
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

/**
 * `period` or `date_range`, never both; and no `compare` with `all_time`, which has no previous
 * period. Each "not both" is an `anyOf` of two branches, each barring one member (`false`), so
 * test generators can draw from either and generated client types refuse the pair.
 */
const EXCLUSIONS: JsonSchema[] = [
  {
    anyOf: [
      { type: 'object', properties: { date_range: false } },
      { type: 'object', properties: { period: false } },
    ],
  },
  {
    anyOf: [
      {
        type: 'object',
        properties: {
          period: { type: 'string', enum: PERIODS.filter((name) => name !== 'all_time') },
        },
      },
      { type: 'object', properties: { compare: false } },
    ],
  },
  // `fill` only with a time dimension, whose buckets it fills.
  {
    anyOf: [
      { type: 'object', properties: { fill: false } },
      {
        type: 'object',
        required: ['dimensions'],
        properties: {
          dimensions: {
            type: 'array',
            items: { type: 'string' },
            contains: { type: 'string', enum: TIME_DIMENSIONS },
          },
        },
      },
    ],
  },
];

/** The zones a query may name, as a pattern: those `zones` (the engine's) and Intl both know. */
export const queryZonePattern = (zones?: ReadonlySet<string>): string =>
  zonePattern(acceptedZoneNames(zones, (name) => engineZone(name, zones) !== null));

/**
 * The query body, with `limit` bounded by the instance's `CAIRN_QUERY_MAX_ROWS` and `timezone`
 * by the zones its engine loads.
 */
export const queryBodySchema = (
  maxRows: number = LIMIT_CEILING,
  zones?: ReadonlySet<string>,
): JsonSchema => ({
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
      // One bucket size per query: the items are the label dimensions and at most one time
      // dimension, a branch per time dimension (test generators can negate this, not maxContains).
      ...enforcedInCode({
        // Typed branches: a code generator reads a branch without `type` as `unknown`.
        anyOf: [undefined, ...TIME_DIMENSIONS].map((time) => ({
          type: 'array',
          items: { type: 'string', enum: [...LABEL_DIMENSIONS, ...(time ? [time] : [])] },
        })),
      }),
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
          { type: 'array', items: { type: 'string', format: 'date', pattern: RANGE_DATE_PATTERN } },
          {
            type: 'array',
            items: { type: 'string', format: 'date-time', pattern: RANGE_DATE_TIME_PATTERN },
          },
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
      ...enforcedInCode({ pattern: queryZonePattern(zones) }),
    },
    filters: { type: 'array', items: filter, maxItems: MAX_FILTERS },
    order_by: {
      type: 'array',
      description:
        'Fields to sort by, each at most once, and each a metric or dimension this query requests (another is a 422 at its `field`).',
      items: orderBy,
      maxItems: MAX_METRICS + MAX_DIMENSIONS,
    },
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
    week_start: {
      type: 'string',
      enum: WEEK_STARTS,
      default: 'monday',
      description:
        'The day `week` buckets and the periods `this_week` and `last_week` start on, in `timezone`.',
    },
    fill: {
      type: 'string',
      enum: FILLS,
      description:
        'With a time dimension and label dimensions: every label combination that has a row in the period gets a row for every bucket of the period (counts 0; rates, averages and percentiles null; state metrics null in buckets not begun). `total_rows`, paging and the row cap count the filled rows. Only with a time dimension (else a 422 at `fill`).',
    },
  },
  required: ['metrics'],
  additionalProperties: false,
  ...enforcedInCode({
    allOf: [...EXCLUSIONS, ORDER_BY_RULE],
  }),
});

export const queryBody: JsonSchema = queryBodySchema();
