import { DIMENSION_NAMES, DIMENSIONS, METRIC_NAMES, METRICS } from './catalog.ts';
import { DEFAULT_PERIOD, PERIOD_DESCRIPTIONS, PERIODS } from './period.ts';
import { DIRECTIONS, FILTER_OPS } from './query.schema.ts';

/** The catalog as callers see it: names, meanings and units, never SQL. */
export function queryCatalog() {
  return {
    metrics: METRIC_NAMES.map((name) => ({
      name,
      description: METRICS[name].description,
      type: METRICS[name].type,
      unit: METRICS[name].unit,
      measured: METRICS[name].source === 'flow' ? 'during_period' : 'at_period_end',
    })),
    dimensions: DIMENSION_NAMES.map((name) => ({
      name,
      description: DIMENSIONS[name].description,
      type: DIMENSIONS[name].type,
      time: DIMENSIONS[name].time,
    })),
    periods: PERIODS.map((name) => ({
      name,
      description: PERIOD_DESCRIPTIONS[name],
      default: name === DEFAULT_PERIOD,
    })),
    filter_ops: FILTER_OPS,
    order_directions: DIRECTIONS,
    default_timezone: 'UTC',
  };
}
