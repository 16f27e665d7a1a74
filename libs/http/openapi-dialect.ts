import { isDeepStrictEqual } from 'node:util';
import { ENFORCED_IN_CODE, type JsonSchema, TEXT_CHECKED_PER_ITEM } from './json-schema.ts';
import { calendarDate, digitRange, group, mayMatchNul, NO_NUL } from './text-patterns.ts';

/**
 * Route schemas are written for Ajv's draft-07 dialect with ajv-formats; OpenAPI 3.1 speaks
 * JSON Schema 2020-12, and the published document holds nothing else. On the way out:
 * - tuple `items` becomes `prefixItems`;
 * - ajv-formats' `formatMinimum`/`formatMaximum` on a date, which no other tool knows, become
 *   a `pattern` on its year (bounds must fall on whole years: anything else throws), and one
 *   on the whole date;
 * - the members of ENFORCED_IN_CODE join the schema as standard keywords, under `allOf` when
 *   the schema already has that keyword, so each constraint adds to the others (an `anyOf`
 *   refines the branches of one it matches, see refineBranches).
 */
export function toOpenApiSchema(schema: unknown): JsonSchema {
  return convert(schema) as JsonSchema;
}

/**
 * A schema of request input (body, query or path), as published: toOpenApiSchema, and every
 * string refusing U+0000 as validation.ts refuses it in all input (Postgres text cannot hold
 * it), by a `pattern` joining any the string already has unless that one already refuses it.
 */
export function toRequestSchema(schema: unknown): JsonSchema {
  return refuseNul(convert(schema)) as JsonSchema;
}

/**
 * A parameter's schema, as toRequestSchema, with a bounded date stated by the one pattern of the
 * whole date: tools that draw parameter values read a parameter's `pattern` and not the ones
 * under its `allOf` (Schemathesis' coverage phase drew `1900-` from the year's alone).
 */
export function toParameterSchema(schema: unknown): JsonSchema {
  return refuseNul(convert(schema, true)) as JsonSchema;
}

// Not `oneOf`: one branch narrowed could leave a value matching exactly one where it matched two.
const BRANCHES = ['allOf', 'anyOf'];
// Not `not`, `contains` or `if`: there a narrower schema would widen or shift what passes.
const SUBSCHEMAS = ['additionalProperties', 'unevaluatedProperties'];
const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs'];
const WELL_FORMED = new Set(['date', 'date-time', 'uuid']);

/** Whether a `pattern` of `schema` (or of its allOf) refuses every text holding U+0000. */
function refusesNul(schema: unknown): boolean {
  if (schema === null || typeof schema !== 'object') return false;
  const { pattern, allOf } = schema as { pattern?: unknown; allOf?: unknown };
  const patterns = [pattern, ...(Array.isArray(allOf) ? allOf : []).map((s) => s?.pattern)];
  return patterns.some((p) => typeof p === 'string' && !mayMatchNul(p));
}

/**
 * `covered`: a schema applying to the same value already refuses U+0000 (a branch's parent);
 * `itemsCovered`: likewise for the items of an array value.
 */
function refuseNul(value: unknown, covered = false, itemsCovered = false): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const schema = { ...(value as Record<string, unknown>) };
  const self = covered || refusesNul(schema);
  const items = itemsCovered || refusesNul(schema.items);
  for (const key of BRANCHES) {
    if (Array.isArray(schema[key])) {
      schema[key] = (schema[key] as unknown[]).map((sub) => refuseNul(sub, self, items));
    }
  }
  if ('items' in schema) schema.items = refuseNul(schema.items, items);
  if (Array.isArray(schema.prefixItems)) {
    schema.prefixItems = (schema.prefixItems as unknown[]).map((sub) => refuseNul(sub));
  }
  for (const key of SUBSCHEMAS) if (key in schema) schema[key] = refuseNul(schema[key]);
  for (const key of SUBSCHEMA_MAPS) {
    const map = schema[key];
    if (map && typeof map === 'object') {
      schema[key] = Object.fromEntries(
        Object.entries(map).map(([name, sub]) => [name, refuseNul(sub)]),
      );
    }
  }
  const free =
    ([] as unknown[]).concat(schema.type).includes('string') &&
    schema.enum === undefined &&
    schema.const === undefined &&
    !WELL_FORMED.has(schema.format as string);
  if (free && !self) add(schema, 'pattern', NO_NUL);
  return schema;
}

function convert(value: unknown, wholeDates = false): unknown {
  if (Array.isArray(value)) return value.map((item) => convert(item, wholeDates));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  const bounds: { formatMinimum?: unknown; formatMaximum?: unknown } = {};
  let enforced: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    // TEXT_CHECKED_PER_ITEM tells the validator, not the reader: the description says it.
    if (key === '$schema' || key === '$id' || key === TEXT_CHECKED_PER_ITEM) continue;
    if (key === ENFORCED_IN_CODE) {
      enforced = convert(member, wholeDates) as Record<string, unknown>;
    } else if (key === 'formatMinimum' || key === 'formatMaximum') bounds[key] = member;
    else if (key === 'items' && Array.isArray(member))
      out.prefixItems = convert(member, wholeDates);
    else out[key] = convert(member, wholeDates);
  }
  if ('formatMinimum' in bounds || 'formatMaximum' in bounds) {
    const [first, last] = yearBounds(out.format, bounds.formatMinimum, bounds.formatMaximum);
    if (!wholeDates) add(out, 'pattern', `^${group(digitRange(first, last))}-`);
    // The whole date too, for tools that draw values from patterns and pass formats by.
    add(out, 'pattern', `^${calendarDate(first, last)}$`);
  }
  for (const [key, member] of Object.entries(enforced)) {
    if (key === 'anyOf') refineBranches(out, member);
    else add(out, key, member);
  }
  return out;
}

/**
 * An enforced `anyOf` beside a validated one with as many branches states what the code checks of
 * each branch's values: the branches are joined one by one (tools drawing a value from one branch
 * then read that branch's rule). Otherwise it is one more constraint, as any other keyword.
 */
function refineBranches(schema: Record<string, unknown>, member: unknown): void {
  const own = schema.anyOf;
  if (!Array.isArray(own) || !Array.isArray(member) || own.length !== member.length) {
    add(schema, 'anyOf', member);
    return;
  }
  schema.anyOf = own.map((branch, i) => {
    const joined = { ...(branch as Record<string, unknown>) };
    for (const [key, value] of Object.entries(member[i] as Record<string, unknown>)) {
      const mine = joined[key];
      if (key === 'items' && isSchemaObject(mine) && isSchemaObject(value)) {
        const items = { ...mine };
        for (const [name, rule] of Object.entries(value)) add(items, name, rule);
        joined.items = items;
      } else add(joined, key, value);
    }
    return joined;
  });
}

const isSchemaObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

function add(schema: Record<string, unknown>, key: string, member: unknown): void {
  if (!(key in schema)) schema[key] = member;
  else if (!isDeepStrictEqual(schema[key], member)) {
    schema.allOf = [...((schema.allOf as unknown[]) ?? []), { [key]: member }];
  }
}

/** `format: date` from `min` to `max` (`1900-01-01`, `2299-12-31`) → `['1900', '2299']`. */
function yearBounds(format: unknown, min: unknown, max: unknown): [string, string] {
  const first = min === undefined ? '0000' : /^(\d{4})-01-01$/.exec(String(min))?.[1];
  const last = max === undefined ? '9999' : /^(\d{4})-12-31$/.exec(String(max))?.[1];
  if (format !== 'date' || first === undefined || last === undefined || first > last) {
    throw new Error(
      `Cannot publish formatMinimum/formatMaximum ${String(min)}..${String(max)} on format ${String(format)}: only whole years of dates`,
    );
  }
  return [first, last];
}
