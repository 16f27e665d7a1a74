import { fullFormats } from 'ajv-formats/dist/formats.js';
import { instantOf } from '../http/date-time-format.ts';
import { ValidationError, type ValidationIssue } from '../http/errors.ts';
import { TASK_STATUSES, type TaskStatus } from './task-status.ts';

/**
 * Filters of the task listings, parsed from query text. A multi-valued filter is written
 * `status=open,in_progress` or `status=open&status=in_progress` (both forms mix); `null` names
 * "none" (`project=null`: tasks without a project). Commas always separate values.
 */

/** How many values one filter may list: enough for any picker, small enough to plan well. */
export const MAX_FILTER_VALUES = 50;
const MAX_LABEL_LENGTH = 200;

/** The values of a label filter; `null` in the list means "no label". */
export type LabelFilter = ReadonlyArray<string | null>;

/** The schema of a filter that may repeat: its values are checked by the parsers below. */
export function multiValueParameter(description: string) {
  return {
    description,
    anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
  };
}

function valuesOf(raw: unknown): string[] {
  const occurrences = Array.isArray(raw) ? raw : [raw];
  return occurrences.flatMap((value) => String(value).split(',')).map((value) => value.trim());
}

function tooMany(name: string, count: number): ValidationIssue[] {
  return count > MAX_FILTER_VALUES
    ? [
        {
          loc: ['query', name],
          msg: `List should have at most ${MAX_FILTER_VALUES} items after validation, not ${count}`,
          type: 'too_long',
        },
      ]
    : [];
}

/** `status=open,in_progress`; each value one of the task statuses. */
export function parseStatuses(name: string, raw: unknown): TaskStatus[] | undefined {
  if (raw === undefined) return undefined;
  const values = valuesOf(raw);
  const issues = tooMany(name, values.length);
  const unknown = values.filter((value) => !(TASK_STATUSES as readonly string[]).includes(value));
  if (unknown.length > 0) {
    const allowed = TASK_STATUSES.map((status) => `'${status}'`);
    issues.push({
      loc: ['query', name],
      msg: `Input should be ${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)} (comma-separated); got ${unknown
        .slice(0, 5)
        .map((value) => `'${value}'`)
        .join(', ')}`,
      type: 'enum',
    });
  }
  if (issues.length > 0) throw new ValidationError(issues);
  return [...new Set(values as TaskStatus[])];
}

/** `project=alpha,null`: labels, `null` for none. */
export function parseLabels(name: string, raw: unknown): LabelFilter | undefined {
  if (raw === undefined) return undefined;
  const values = valuesOf(raw);
  const issues = tooMany(name, values.length);
  if (values.some((value) => value.length === 0)) {
    issues.push({
      loc: ['query', name],
      msg: 'String should have at least 1 character (use null for none)',
      type: 'string_too_short',
    });
  }
  if (values.some((value) => value.length > MAX_LABEL_LENGTH)) {
    issues.push({
      loc: ['query', name],
      msg: `String should have at most ${MAX_LABEL_LENGTH} characters`,
      type: 'string_too_long',
    });
  }
  if (issues.length > 0) throw new ValidationError(issues);
  return [...new Set(values)].map((value) => (value === 'null' ? null : value));
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const isDate = fullFormats.date as { validate: (text: string) => boolean };
// Postgres has no year 0 and JS dates end in 275760: bounds stay within what both hold.
const EARLIEST = Date.parse('0001-01-01T00:00:00Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * A range bound on a timestamp: an RFC 3339 date-time, or a date `YYYY-MM-DD` meaning that
 * day's midnight UTC (so `[gte]=2026-11-01&[lt]=2026-12-01` is November, in UTC).
 */
export function parseInstant(name: string, raw: unknown): Date | undefined {
  if (raw === undefined) return undefined;
  const text = typeof raw === 'string' ? raw : '';
  const dateOnly = DATE_ONLY.test(text);
  // No leap seconds nor offsets past ±14:00: see date-time-format.ts.
  const at = dateOnly
    ? isDate.validate(text)
      ? Date.parse(`${text}T00:00:00Z`)
      : Number.NaN
    : (instantOf(text) ?? Number.NaN);
  if (Number.isNaN(at)) {
    throw ValidationError.at(
      ['query', name],
      'Input should be a valid datetime in ISO 8601 format, or a date YYYY-MM-DD (midnight UTC)',
      'datetime_parsing',
    );
  }
  if (at < EARLIEST || at > LATEST) {
    throw ValidationError.at(
      ['query', name],
      'Input should be between 0001-01-01 and 9999-12-31',
      at < EARLIEST ? 'greater_than_equal' : 'less_than_equal',
    );
  }
  return new Date(at);
}

/**
 * The operators of a range filter `field[op]`. Ranges are half-open, so that consecutive ones
 * (`[gte]=2026-11-01&[lt]=2026-12-01`, then December) never share a task.
 */
export const RANGE_OPS = {
  gte: { sql: '>=', phrase: 'on or after' },
  lt: { sql: '<', phrase: 'before' },
} as const;
export type RangeOp = keyof typeof RANGE_OPS;
export const RANGE_OP_NAMES = Object.keys(RANGE_OPS) as RangeOp[];

/** The query key of a range filter, as it arrives: `created_at[gte]`. */
export type RangeKey<Field extends string> = `${Field}[${RangeOp}]`;
export const rangeKey = <Field extends string>(field: Field, op: RangeOp): RangeKey<Field> =>
  `${field}[${op}]`;

/** A timestamp range filter: `field[gte]` or `field[lt]`. */
export function instantParameter(field: string, op: RangeOp) {
  return {
    type: 'string',
    description: `${field} ${RANGE_OPS[op].phrase} this instant: RFC 3339 date-time, or YYYY-MM-DD for midnight UTC.`,
  };
}
