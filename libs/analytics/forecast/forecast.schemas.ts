import { businessName } from '../../auth/business-name.ts';
import type { JsonSchema } from '../../http/validation.ts';
import { MAX_FILTERS, queryBodySchema } from '../parse/query.schemas.ts';
import type { QueryFilter } from '../parse/query-parser.ts';
import { PERIODS, type PeriodName } from '../period/period.ts';
import { HORIZON_DAYS } from './monte-carlo.ts';

export const MIN_TRIALS = 1_000;
export const MAX_TRIALS = 100_000;
export const DEFAULT_TRIALS = 10_000;
export const MAX_SEED = 4_294_967_295;

export interface ForecastRequest {
  business: string;
  project?: string;
  filters?: QueryFilter[];
  history: PeriodName | [string, string];
  timezone?: string;
  trials: number;
  seed?: number;
}

/** The forecast body, its `timezone` bounded by the zones the instance's engine loads. */
export const forecastBody = (zones?: ReadonlySet<string>): JsonSchema => {
  const query = queryBodySchema(undefined, zones).properties as Record<string, JsonSchema>;
  return {
    type: 'object',
    properties: {
      business: { ...businessName, description: 'A business the token is bound to.' },
      project: {
        type: 'string',
        minLength: 1,
        maxLength: 200,
        description: 'Only this project’s tasks (the same as a filter `project eq`).',
      },
      filters: {
        ...query.filters,
        maxItems: MAX_FILTERS - 1,
        description:
          'The `/query` filters: which tasks count, both in the open work and in the throughput.',
      },
      history: {
        description:
          'The days whose completions make the throughput: a `/query` period name, or a `date_range` pair: two dates `YYYY-MM-DD` (whole days in `timezone`, both included) or two RFC 3339 date-times with offsets (half-open), the first not after the second and at most 10 years apart. Only whole days count: today (still running) and days the projection has not reached do not; a history without one answers with no throughput and a warning `empty_history`.',
        anyOf: [
          { type: 'string', enum: PERIODS },
          { ...query.date_range, description: 'Two dates, or two date-times, as `date_range`.' },
        ],
      },
      timezone: {
        ...query.timezone,
        description:
          'The IANA time zone days are counted in (history and completion dates), one the service’s ICU and ClickHouse both know; default `UTC`.',
      },
      trials: {
        type: 'integer',
        minimum: MIN_TRIALS,
        maximum: MAX_TRIALS,
        default: DEFAULT_TRIALS,
        description: 'How many futures to simulate.',
      },
      seed: {
        type: 'integer',
        minimum: 0,
        maximum: MAX_SEED,
        description:
          'Fixes the simulation: the same seed over the same data gives the same answer. Absent: a random one, echoed in `metadata.seed`.',
      },
    },
    required: ['business', 'history'],
    additionalProperties: false,
  };
};

const percentiles = (item: JsonSchema, description: string): JsonSchema => ({
  type: 'object',
  description,
  properties: { p50: item, p85: item, p95: item },
  required: ['p50', 'p85', 'p95'],
  additionalProperties: false,
});

export const forecastResponse: JsonSchema = {
  type: 'object',
  properties: {
    data: {
      type: 'object',
      properties: {
        open_tasks: {
          type: 'integer',
          minimum: 0,
          description: 'Tasks open or in progress now (the work left).',
        },
        throughput_per_day: {
          type: 'number',
          minimum: 0,
          description: 'Tasks completed per whole day of the history, on average.',
        },
        completion: percentiles(
          { type: ['string', 'null'], format: 'date' },
          `The day by which the open tasks are done in 50, 85 and 95% of the simulated futures (in \`timezone\`; today when nothing is open); null beyond ${HORIZON_DAYS} days.`,
        ),
        completion_days: percentiles(
          { type: ['integer', 'null'], minimum: 0 },
          'The same, as days from today.',
        ),
      },
      required: ['open_tasks', 'throughput_per_day', 'completion', 'completion_days'],
      additionalProperties: false,
    },
    metadata: {
      type: 'object',
      properties: {
        business: { type: 'string' },
        history: {
          type: 'object',
          description: 'The history as resolved: half-open bounds and the whole days it held.',
          properties: {
            name: { type: 'string' },
            from: { type: 'string', format: 'date-time' },
            to: { type: 'string', format: 'date-time' },
            timezone: { type: 'string' },
            days: { type: 'integer', minimum: 0 },
          },
          required: ['name', 'from', 'to', 'timezone', 'days'],
          additionalProperties: false,
        },
        trials: { type: 'integer', minimum: MIN_TRIALS, maximum: MAX_TRIALS },
        seed: { type: 'integer', minimum: 0, maximum: MAX_SEED },
        horizon_days: { type: 'integer', const: HORIZON_DAYS },
        data_as_of: { type: 'string', format: 'date-time' },
        elapsed_ms: { type: 'number', minimum: 0 },
      },
      required: [
        'business',
        'history',
        'trials',
        'seed',
        'horizon_days',
        'data_as_of',
        'elapsed_ms',
      ],
      additionalProperties: false,
    },
    warnings: {
      type: 'array',
      items: {
        type: 'object',
        properties: { code: { type: 'string' }, message: { type: 'string' } },
        required: ['code', 'message'],
      },
    },
  },
  required: ['data', 'metadata'],
  additionalProperties: false,
};
