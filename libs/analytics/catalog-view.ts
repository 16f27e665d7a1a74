import {
  DIMENSION_NAMES,
  DIMENSIONS,
  emptyValue,
  METRIC_NAMES,
  METRICS,
  noneLabel,
} from './catalog/catalog.ts';
import { FILTER_OPS } from './catalog/filter-ops.ts';
import { DIRECTIONS, INCLUSIONS } from './parse/query.schemas.ts';
import { MAX_BUCKETS } from './period/buckets.ts';
import { COMPARE_MODES } from './period/comparison-period.ts';
import { MAX_RANGE_YEARS } from './period/date-range.ts';
import { DEFAULT_PERIOD, PERIOD_DESCRIPTIONS, PERIODS } from './period/period.ts';

/** The catalog as callers see it: names, meanings and units, never SQL. */
export function queryCatalog() {
  return {
    metrics: METRIC_NAMES.map((name) => ({
      name,
      description: METRICS[name].description,
      type: METRICS[name].type,
      unit: METRICS[name].unit,
      measured: METRICS[name].source === 'flow' ? 'during_period' : 'at_period_end',
      empty: emptyValue(name),
    })),
    dimensions: DIMENSION_NAMES.map((name) => ({
      name,
      description: DIMENSIONS[name].description,
      type: DIMENSIONS[name].type,
      time: DIMENSIONS[name].time,
      nullable: noneLabel(name) !== undefined,
    })),
    periods: PERIODS.map((name) => ({
      name,
      description: PERIOD_DESCRIPTIONS[name],
      default: name === DEFAULT_PERIOD,
    })),
    filter_ops: FILTER_OPS,
    order_directions: DIRECTIONS,
    compare: COMPARE_MODES,
    include: INCLUSIONS,
    default_timezone: 'UTC',
    max_buckets: MAX_BUCKETS,
    max_date_range_years: MAX_RANGE_YEARS,
  };
}
