import { FILTER_OPERATORS, type FilterOp } from '../../catalog/filter-ops.ts';
import { type ClickHouseType, param, type SqlValue } from './sql-value.ts';

/*
 * The placeholders metric sources read. The compiler (`bindParams` in query-compiler.ts) binds
 * a value to each parameter the rendered statement names, and only to those.
 */

/** An instant as every statement binds it: milliseconds, UTC. */
export const TIME: ClickHouseType = "DateTime64(3, 'UTC')";
const TIMES: ClickHouseType = "Array(DateTime64(3, 'UTC'))";

/** The period's start: `{from:DateTime64(3, 'UTC')}`. */
export const FROM = param('from', TIME);
/** The period's end (excluded): `{to:DateTime64(3, 'UTC')}`. */
export const TO = param('to', TIME);
/** The end of what a state statement reads: `{state_to:DateTime64(3, 'UTC')}`. */
export const STATE_TO = param('state_to', TIME);
/** The UTC midnight before which state is read from the daily base: `{state_base:DateTime64(3, 'UTC')}`. */
export const STATE_BASE = param('state_base', TIME);
/** Each state bucket's start: `{starts:Array(DateTime64(3, 'UTC'))}`. */
export const STARTS = param('starts', TIMES);
/** Each state bucket's instant: `{ats:Array(DateTime64(3, 'UTC'))}`. */
export const ATS = param('ats', TIMES);
/** Bucket instants moved up to a slot boundary: `{slot_ats:Array(DateTime64(3, 'UTC'))}`. */
export const SLOT_ATS = param('slot_ats', TIMES);
/** The query's time zone: `{tz:String}`. */
export const TZ = param('tz', 'String');

/** The caller's businesses: `{businesses:Array(String)}`. */
export const BUSINESSES = param('businesses', 'Array(String)');
/** Rows to return at most: `{limit:UInt32}`. */
export const LIMIT = param('limit', 'UInt32');
/** Rows to skip first: `{offset:UInt64}`. */
export const OFFSET = param('offset', 'UInt64');
/** `fill: "zero"`: each bucket's label, `{fill:Array(String)}`. */
export const FILL = param('fill', 'Array(String)');
/** `fill: "zero"`: how many buckets have begun, `{fill_started:UInt32}`. */
export const FILL_STARTED = param('fill_started', 'UInt32');

/** The i-th filter's values: `{f0:String}` for one value, `{f0:Array(String)}` for a list. */
export const filterValues = (i: number, op: FilterOp): SqlValue =>
  param(`f${i}`, FILTER_OPERATORS[op].oneValue ? 'String' : 'Array(String)');
