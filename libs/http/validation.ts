import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { dateTimeFormat } from './date-time-format.ts';
import { MAX_ISSUES, ValidationError, type ValidationIssue } from './errors.ts';
import { ENFORCED_IN_CODE, type JsonSchema, TEXT_CHECKED_PER_ITEM } from './json-schema.ts';
import { parseParams } from './strict-params.ts';

export type { JsonSchema };
export type Location = 'body' | 'query' | 'path';

const OPTIONS: Options = { strict: true, useDefaults: true };

function ajvWith(options: Options): Ajv {
  const ajv = addFormats(new Ajv({ ...OPTIONS, ...options }));
  ajv.addFormat('date-time', dateTimeFormat);
  // An annotation here: its constraints are checked by code, and only published.
  ajv.addKeyword({ keyword: ENFORCED_IN_CODE, schemaType: 'object' });
  ajv.addKeyword({ keyword: TEXT_CHECKED_PER_ITEM, schemaType: 'array' });
  return ajv;
}

// Two compilations of each schema: a first-error one answers valid input (and finds that input
// is bad) in time proportional to the input; the all-errors one only ever sees input cut down
// to what a 422 can list, so a megabyte of bad items cannot hold the event loop.
const firstErrorAjv = ajvWith({ allErrors: false });
const allErrorsAjv = ajvWith({ allErrors: true });

interface Checks {
  first: ValidateFunction;
  all: ValidateFunction;
}
const compiled = new WeakMap<JsonSchema, Checks>();

/** Compiles `schema` now (a few ms each), so no request pays for it. */
export function prepare(schema: JsonSchema): void {
  checksFor(schema);
}

function checksFor(schema: JsonSchema): Checks {
  let checks = compiled.get(schema);
  if (!checks) {
    checks = { first: firstErrorAjv.compile(schema), all: allErrorsAjv.compile(schema) };
    compiled.set(schema, checks);
  }
  return checks;
}

/**
 * Checks `value` against `schema` and returns it (with defaults filled in), or throws a
 * ValidationError whose locations start with `location`, e.g. `["body","metrics",0]`. Query and
 * path values are text: they are read strictly (see parseParams) before the schema check.
 */
export function validate<T>(schema: JsonSchema, value: unknown, location: Location): T {
  const checks = checksFor(schema);
  if (value === undefined && location === 'body') {
    throw ValidationError.at(['body'], 'Field required', 'missing');
  }
  const input =
    location === 'body' ? value : parseParams(schema, (value ?? {}) as Record<string, unknown>);
  if (checks.first(input)) {
    // Valid input is no bigger than the schema allows: the walk for bad text is bounded too.
    const textual = textIssues(withoutOwnChecks(schema, input), location);
    if (textual.length === 0) return input as T;
    throw new ValidationError(textual);
  }
  // Refused input is only walked as far as a 422 can describe it: 100,000 items past a
  // `maxItems` of 20 are not each looked at.
  const bounded = boundForReport(schema, input, 0);
  const textual = textIssues(withoutOwnChecks(schema, bounded), location);
  checks.all(bounded);
  let issues = toIssues(checks.all.errors ?? [], location);
  // The bad part may lie past the cut: then the first error is the one to report.
  if (issues.length === 0) issues = toIssues(checks.first.errors ?? [], location);
  throw new ValidationError([...issues, ...textual].slice(0, MAX_ISSUES));
}

/**
 * A copy of `value` no bigger than a 422 can describe: arrays cut just past their `maxItems`
 * (the too_long issue still shows) or past MAX_ISSUES items, and objects keep their known
 * members and the first MAX_ISSUES others (whose values, which no schema describes, are cut
 * the same way). Nothing past the cut is looked at, however much a body holds there.
 */
function boundForReport(schema: JsonSchema | undefined, value: unknown, depth: number): unknown {
  if (depth > 32 || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const maxItems = typeof schema?.maxItems === 'number' ? schema.maxItems : MAX_ISSUES;
    const items = schema?.items as JsonSchema | undefined;
    return value.slice(0, maxItems + 1).map((item) => boundForReport(items, item, depth + 1));
  }
  const properties = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  const bounded: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(properties)) {
    if (Object.hasOwn(value, key)) {
      bounded[key] = boundForReport(property, (value as Record<string, unknown>)[key], depth + 1);
    }
  }
  let unknown = 0;
  for (const key in value) {
    if (Object.hasOwn(properties, key)) continue;
    if (unknown++ >= MAX_ISSUES) break;
    bounded[key] = boundForReport(undefined, (value as Record<string, unknown>)[key], depth + 1);
  }
  return bounded;
}

/** The value without the members whose text its handler checks item by item. */
function withoutOwnChecks(schema: JsonSchema, value: unknown): unknown {
  const own = schema[TEXT_CHECKED_PER_ITEM] as string[] | undefined;
  if (!own || typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const rest = { ...(value as Record<string, unknown>) };
  for (const name of own) delete rest[name];
  return rest;
}

/**
 * Postgres text cannot hold U+0000, and a lone UTF-16 surrogate has no UTF-8 form (it would
 * fail deep inside a write, or be stored silently as U+FFFD): both are refused here, at their
 * own location, for every input alike. The walk keeps its own stack: a body may nest arrays
 * far deeper than the call stack goes.
 */
function textIssues(root: unknown, location: Location): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (typeof root === 'string') {
    const fault = textFault(root);
    return fault ? [{ loc: [location], ...fault }] : [];
  }
  // Only containers are queued, each pointing at its parent, so a megabyte of scalars costs no
  // allocation and paths are only built for the rare string at fault.
  const pending: Array<{ value: object; parent: number; key: string | number }> = [];
  const pathTo = (at: number, key: string | number): Array<string | number> => {
    const path: Array<string | number> = [key];
    for (let i = at; i >= 0; i = (pending[i] as { parent: number }).parent) {
      path.push((pending[i] as { key: string | number }).key);
    }
    return path.reverse();
  };
  const visit = (item: unknown, at: number, key: string | number) => {
    if (typeof item === 'string') {
      const fault = textFault(item);
      if (fault) issues.push({ loc: pathTo(at, key), ...fault });
    } else if (typeof item === 'object' && item !== null) {
      pending.push({ value: item, parent: at, key });
    }
  };
  if (typeof root === 'object' && root !== null) {
    pending.push({ value: root, parent: -1, key: location });
  }
  for (let at = 0; at < pending.length && issues.length < MAX_ISSUES; at++) {
    const { value } = pending[at] as { value: object };
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) visit(value[i], at, i);
    } else {
      for (const key in value) {
        const fault = textFault(key);
        if (fault) issues.push({ loc: pathTo(at, key), ...fault });
        visit((value as Record<string, unknown>)[key], at, key);
      }
    }
  }
  return issues;
}

// With the u flag a well-formed pair is one code point, so only unpaired halves match.
const LONE_SURROGATE = /\p{Cs}/u;
const ASCII_PRINTABLE = /^[\x20-\x7e]*$/;

function textFault(text: string): { msg: string; type: string } | undefined {
  // Most strings are short ASCII words: a quick scan spares the regex engine.
  if (ASCII_PRINTABLE.test(text)) return undefined;
  if (text.includes('\u0000')) {
    return { msg: 'String should not contain the NUL character (U+0000)', type: 'string_nul' };
  }
  if (LONE_SURROGATE.test(text)) {
    return {
      msg: 'String should be valid Unicode: it holds an unpaired UTF-16 surrogate',
      type: 'string_unicode',
    };
  }
  return undefined;
}

function toIssues(errors: ErrorObject[], location: Location): ValidationIssue[] {
  const seen = new Set<string>();
  const issues: ValidationIssue[] = [];
  for (const error of errors) {
    if (issues.length >= MAX_ISSUES) break;
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
