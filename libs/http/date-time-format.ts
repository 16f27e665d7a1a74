import type { FormatDefinition } from 'ajv';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { calendarDate, group } from './text-patterns.ts';

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|([+-])(\d{2}):(\d{2}))$/;

/** The widest offset any zone has ever used is +14:00; anything past it is a typo or a probe. */
export const MAX_OFFSET_MINUTES = 14 * 60;
/** Instants a filter may name: within the years 0001–9999 in UTC, as Postgres and JS agree. */
// Date.UTC reads years 0–99 as 1900–1999, hence the literal.
const EARLIEST = Date.parse('0001-01-01T00:00:00Z');
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * RFC 3339 date-times, narrowed to those every engine reads the same way: no leap second
 * (`23:59:60`: Postgres, ClickHouse and JS each handle it differently), an offset of at most
 * ±14:00, and a UTC instant within the years 1–9999 (see instantOf for the edge days).
 */
export function isInstant(text: string): boolean {
  const at = instantOf(text);
  return at !== undefined && at >= EARLIEST && at <= LATEST;
}

/**
 * The UTC milliseconds of an RFC 3339 date-time without leap second or extreme offset, dated
 * in the years 1–9999. On the first day of year 1 an offset ahead of UTC, and on the last day
 * of 9999 one behind it, may name an instant outside those years: such date-times are refused
 * whatever their time of day, a rule a `pattern` states exactly (DATE_OR_INSTANT_PATTERN), where "is the
 * time past the offset" would take hundreds of alternatives.
 */
export function instantOf(text: string): number | undefined {
  const match = DATE_TIME.exec(text);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, , zone, sign, oh, om] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (year < 1) return undefined;
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined;
  let offset = 0;
  if (zone !== 'Z' && zone !== 'z') {
    if (Number(om) > 59) return undefined;
    offset = (Number(oh) * 60 + Number(om)) * (sign === '-' ? -1 : 1);
    if (Math.abs(offset) > MAX_OFFSET_MINUTES) return undefined;
    if (year === 1 && month === 1 && day === 1 && offset > 0) return undefined;
    if (year === 9999 && month === 12 && day === 31 && offset < 0) return undefined;
  }
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(Number(h), Number(mi) - offset, Number(s), 0);
  return utc.getTime();
}

const OFFSET = '((0[0-9]|1[0-3]):[0-5][0-9]|14:00)';
/** An optional RFC 3339 time, `T` first, with one of `zones`. */
const timeWith = (zones: string) =>
  `([Tt]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,9})?${zones})?`;
const ANY_TIME = timeWith(`([Zz]|[+-]${OFFSET})`);

/**
 * A date, or a date-time instantOf takes, as a `pattern`: the days each month has (02-29 in
 * leap years only), years 0001–9999, offsets of at most ±14:00, but on 0001-01-01 none ahead
 * of UTC and on 9999-12-31 none behind it. Neither 0001 nor 9999 is a leap year.
 */
export const DATE_OR_INSTANT_PATTERN = `^${group([
  `0001-01-01${timeWith(`([Zz]|[+]00:00|-${OFFSET})`)}`,
  `0001-(01-(0[2-9]|[12][0-9]|3[01])|(0[2-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])|(0[3-9]|1[0-2])-(29|30)|(0[3578]|1[02])-31)${ANY_TIME}`,
  `${calendarDate('0002', '9998')}${ANY_TIME}`,
  `9999-((0[1-9]|1[01])-(0[1-9]|1[0-9]|2[0-8])|(0[13-9]|1[01])-(29|30)|(0[13578]|10)-31|12-(0[1-9]|[12][0-9]|30))${ANY_TIME}`,
  `9999-12-31${timeWith(`([Zz]|-00:00|[+]${OFFSET})`)}`,
])}$`;

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

const base = fullFormats['date-time'] as { compare: FormatDefinition<string>['compare'] };

/** Replaces ajv-formats' `date-time`, keeping its comparison for `formatMinimum`/`formatMaximum`. */
export const dateTimeFormat: FormatDefinition<string> = {
  type: 'string',
  validate: isInstant,
  ...(base.compare ? { compare: base.compare } : {}),
};
