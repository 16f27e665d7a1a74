import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { ValidationError, type ValidationIssue } from './errors.ts';

export type JsonSchema = Record<string, unknown>;
export type Location = 'body' | 'query' | 'path';

const OPTIONS: Options = { allErrors: true, strict: true, useDefaults: true };

// Query and path values arrive as strings; coercion turns "20" into 20 before the type check,
// and "abc" still fails it with an int_parsing error.
const bodyAjv = addFormats(new Ajv(OPTIONS));
const paramAjv = addFormats(new Ajv({ ...OPTIONS, coerceTypes: true }));

const compiled = new WeakMap<JsonSchema, ValidateFunction>();

/**
 * Checks `value` against `schema` and returns it (with defaults filled in), or throws a
 * ValidationError whose locations start with `location`, e.g. `["body","metrics",0]`.
 */
export function validate<T>(schema: JsonSchema, value: unknown, location: Location): T {
  let check = compiled.get(schema);
  if (!check) {
    check = (location === 'body' ? bodyAjv : paramAjv).compile(schema);
    compiled.set(schema, check);
  }
  if (value === undefined && location === 'body') {
    throw ValidationError.at(['body'], 'Field required', 'missing');
  }
  const valid = check(value);
  const issues = [
    ...(valid ? [] : toIssues(check.errors ?? [], location)),
    ...nulIssues(value, location),
  ];
  if (issues.length === 0) return value as T;
  throw new ValidationError(issues);
}

/**
 * Postgres text cannot hold U+0000, so a string carrying one would fail deep inside a write or
 * a filter; it is refused here, at its own location, for every input alike. The walk keeps its
 * own stack: a body may nest arrays far deeper than the call stack goes.
 */
function nulIssues(root: unknown, location: Location): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  // Each entry points at its parent, so paths are only built for the rare string at fault.
  const pending: Array<{ value: unknown; parent: number; key: string | number }> = [
    { value: root, parent: -1, key: location },
  ];
  const pathTo = (at: number, key?: string): Array<string | number> => {
    const path: Array<string | number> = key === undefined ? [] : [key];
    for (let i = at; i >= 0; i = (pending[i] as { parent: number }).parent) {
      path.push((pending[i] as { key: string | number }).key);
    }
    return path.reverse();
  };
  for (let at = 0; at < pending.length; at++) {
    const { value } = pending[at] as { value: unknown };
    if (typeof value === 'string') {
      if (value.includes('\u0000'))
        issues.push({ loc: pathTo(at), msg: NUL_MESSAGE, type: 'string_nul' });
    } else if (Array.isArray(value)) {
      for (const [key, item] of value.entries()) pending.push({ value: item, parent: at, key });
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (key.includes('\u0000')) {
          issues.push({ loc: pathTo(at, key), msg: NUL_MESSAGE, type: 'string_nul' });
        }
        pending.push({ value: item, parent: at, key });
      }
    }
  }
  return issues;
}

const NUL_MESSAGE = 'String should not contain the NUL character (U+0000)';

function toIssues(errors: ErrorObject[], location: Location): ValidationIssue[] {
  const seen = new Set<string>();
  const issues: ValidationIssue[] = [];
  for (const error of errors) {
    // anyOf/oneOf wrappers repeat what their branches already said.
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue;
    const issue = toIssue(error, location);
    const key = JSON.stringify(issue.loc) + issue.type;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  return issues;
}

function pointerToPath(pointer: string): Array<string | number> {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
}

const TYPE_ERRORS: Record<string, [string, string]> = {
  integer: ['int_parsing', 'Input should be a valid integer'],
  number: ['float_parsing', 'Input should be a valid number'],
  string: ['string_type', 'Input should be a valid string'],
  boolean: ['bool_parsing', 'Input should be a valid boolean'],
  array: ['list_type', 'Input should be a valid list'],
  object: ['dict_type', 'Input should be a valid dictionary'],
  null: ['none_required', 'Input should be None'],
};

const FORMAT_ERRORS: Record<string, [string, string]> = {
  date: ['date_parsing', 'Input should be a valid date in the format YYYY-MM-DD'],
  'date-time': ['datetime_parsing', 'Input should be a valid datetime in ISO 8601 format'],
  uuid: ['uuid_parsing', 'Input should be a valid UUID'],
};

function toIssue(error: ErrorObject, location: Location): ValidationIssue {
  const path = [location, ...pointerToPath(error.instancePath)];
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return {
        loc: [...path, String(params.missingProperty)],
        msg: 'Field required',
        type: 'missing',
      };
    case 'additionalProperties':
      return {
        loc: [...path, String(params.additionalProperty)],
        msg: 'Extra inputs are not permitted',
        type: 'extra_forbidden',
      };
    case 'type': {
      const expected = String(params.type).split(',')[0] ?? 'string';
      const [type, msg] = TYPE_ERRORS[expected] ?? ['type_error', `Input should be ${expected}`];
      const isRoot = error.instancePath === '' && location === 'body';
      return isRoot ? { loc: path, msg, type: 'model_attributes_type' } : { loc: path, msg, type };
    }
    case 'minimum':
      return {
        loc: path,
        msg: `Input should be greater than or equal to ${params.limit}`,
        type: 'greater_than_equal',
      };
    case 'maximum':
      return {
        loc: path,
        msg: `Input should be less than or equal to ${params.limit}`,
        type: 'less_than_equal',
      };
    case 'formatMinimum':
      return {
        loc: path,
        msg: `Input should be on or after ${params.limit}`,
        type: 'greater_than_equal',
      };
    case 'formatMaximum':
      return {
        loc: path,
        msg: `Input should be on or before ${params.limit}`,
        type: 'less_than_equal',
      };
    case 'exclusiveMinimum':
      return {
        loc: path,
        msg: `Input should be greater than ${params.limit}`,
        type: 'greater_than',
      };
    case 'exclusiveMaximum':
      return { loc: path, msg: `Input should be less than ${params.limit}`, type: 'less_than' };
    case 'enum': {
      const allowed = (params.allowedValues as unknown[]).map((value) => `'${String(value)}'`);
      const list =
        allowed.length > 1 ? `${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}` : allowed[0];
      return { loc: path, msg: `Input should be ${list}`, type: 'enum' };
    }
    case 'const':
      return {
        loc: path,
        msg: `Input should be '${String(params.allowedValue)}'`,
        type: 'literal_error',
      };
    case 'minLength':
      return {
        loc: path,
        msg: `String should have at least ${params.limit} character${plural(params.limit)}`,
        type: 'string_too_short',
      };
    case 'maxLength':
      return {
        loc: path,
        msg: `String should have at most ${params.limit} character${plural(params.limit)}`,
        type: 'string_too_long',
      };
    case 'minItems':
      return {
        loc: path,
        msg: `List should have at least ${params.limit} item${plural(params.limit)}`,
        type: 'too_short',
      };
    case 'maxItems':
      return {
        loc: path,
        msg: `List should have at most ${params.limit} item${plural(params.limit)}`,
        type: 'too_long',
      };
    case 'uniqueItems':
      return { loc: path, msg: 'List items should be unique', type: 'unique_items' };
    case 'pattern':
      return {
        loc: path,
        msg: `String should match pattern '${params.pattern}'`,
        type: 'string_pattern_mismatch',
      };
    case 'format': {
      const [type, msg] = FORMAT_ERRORS[String(params.format)] ?? [
        'value_error',
        `Input should be a valid ${params.format}`,
      ];
      return { loc: path, msg, type };
    }
    default:
      return { loc: path, msg: error.message ?? 'Invalid value', type: 'value_error' };
  }
}

function plural(limit: unknown): string {
  return limit === 1 ? '' : 's';
}
