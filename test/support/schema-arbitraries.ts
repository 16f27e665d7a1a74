import fc from 'fast-check';

/**
 * fast-check arbitraries read off JSON Schema 2020-12 (the subset an OpenAPI 3.1 document uses):
 * values the schema should accept and near misses, each one mutation away from such a value.
 * Neither is trusted to be what it claims: the test classifies every value with a standard
 * validator. A generator only has to make both kinds frequent.
 */

export type Schema = { [keyword: string]: unknown };

export interface SchemaContext {
  /** `#/…` JSON pointer into the document. */
  resolve(ref: string): Schema;
  /**
   * Values a caller would send for a member or parameter of this name (existing gids, the
   * token's business), mixed with the generated ones so that requests get past a 404.
   */
  hints(name: string | undefined): readonly unknown[];
  /** The value travels in a header: printable ASCII, no edge spaces. */
  ascii?: boolean;
  /**
   * A standard validator's word on a value, used to steer generation past constraints a
   * generator cannot build in (`not`, `if`, conditions inside `allOf`). Never the verdict.
   */
  accepts?: (schema: Schema, value: unknown) => boolean;
}

/** A near miss and what was changed, for the report. */
export interface Mutated {
  value: unknown;
  mutation: string;
}

const JSON_TYPES = ['string', 'integer', 'number', 'boolean', 'null', 'array', 'object'] as const;
const WIDE = 1e9;

export function deref(schema: unknown, ctx: SchemaContext): Schema {
  let current = (typeof schema === 'object' && schema !== null ? schema : {}) as Schema;
  for (let hops = 0; typeof current.$ref === 'string' && hops < 20; hops++) {
    const { $ref, ...siblings } = current;
    current = { ...ctx.resolve($ref as string), ...siblings };
  }
  return current;
}

/** The types a schema allows, or every type when it does not say. */
export function typesOf(schema: Schema): string[] {
  if (typeof schema.type === 'string') return [schema.type];
  if (Array.isArray(schema.type)) return schema.type as string[];
  if (schema.const !== undefined) return [jsonType(schema.const)];
  if (Array.isArray(schema.enum)) return [...new Set(schema.enum.map(jsonType))];
  if (schema.properties || schema.required) return ['object'];
  if (schema.items || schema.prefixItems) return ['array'];
  if (typeof schema.pattern === 'string' || schema.format || schema.minLength !== undefined)
    return ['string'];
  return [...JSON_TYPES];
}

export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (Number.isInteger(value)) return 'integer';
  return typeof value;
}

/**
 * Two schemas that must both hold, as one, for generation: members and items merged,
 * `required` joined, any other keyword of `b` winning. Constraints this drops (two `not`s)
 * are left to `steer`.
 */
function merge(a: Schema, b: Schema, ctx: SchemaContext): Schema {
  const out: Schema = { ...a, ...b };
  if (a.properties && b.properties) {
    const props: Record<string, unknown> = { ...(a.properties as object) };
    for (const [key, sub] of Object.entries(b.properties as object)) {
      props[key] = key in props ? merge(deref(props[key], ctx), deref(sub, ctx), ctx) : sub;
    }
    out.properties = props;
  }
  if (a.items && b.items && typeof a.items === 'object' && typeof b.items === 'object') {
    out.items = merge(deref(a.items, ctx), deref(b.items, ctx), ctx);
  }
  if (a.required || b.required) {
    out.required = [
      ...new Set([...((a.required as string[]) ?? []), ...((b.required as string[]) ?? [])]),
    ];
  }
  return out;
}

/** The branches of an anyOf/oneOf (or an if/then/else), each with the keywords beside it. */
function branches(schema: Schema, ctx: SchemaContext): Schema[] | undefined {
  const list = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (!list) return conditionalBranches(schema, ctx);
  const { anyOf: _a, oneOf: _o, ...siblings } = schema;
  return list.map((branch) => merge(siblings, flatten(branch, ctx), ctx));
}

/**
 * An if/then/else as two shapes: what meets `if` and `then`, or `else` without the members `if`
 * requires (so `if` fails). A branch that caps its member count keeps only the members it names.
 */
function conditionalBranches(schema: Schema, ctx: SchemaContext): Schema[] | undefined {
  if (schema.if === undefined || (schema.then === undefined && schema.else === undefined)) {
    return undefined;
  }
  const { if: when, then: yes, else: no, ...siblings } = schema;
  const condition = flatten(when ?? {}, ctx);
  const only = (keep: (key: string) => boolean): Schema => ({
    ...siblings,
    properties: Object.fromEntries(
      Object.entries((siblings.properties ?? {}) as object).filter(([key]) => keep(key)),
    ),
  });
  const thenShape = flatten(yes ?? {}, ctx);
  const named = Object.keys((thenShape.properties ?? {}) as object);
  const capped = typeof thenShape.maxProperties === 'number' && named.length > 0;
  const elseShape = flatten(no ?? {}, ctx);
  const needed = new Set((condition.required as string[] | undefined) ?? []);
  return [
    merge(
      merge(
        only((key) => !capped || named.includes(key)),
        condition,
        ctx,
      ),
      thenShape,
      ctx,
    ),
    merge(
      only((key) => !needed.has(key)),
      elseShape,
      ctx,
    ),
  ];
}

/** allOf folded into one schema, for the shape of what to generate. */
function flatten(schema: unknown, ctx: SchemaContext): Schema {
  const base = deref(schema, ctx);
  if (!Array.isArray(base.allOf)) return base;
  const { allOf, ...rest } = base;
  return (allOf as Schema[]).reduce<Schema>((acc, part) => {
    const { not: _not, if: _if, then: _then, else: _else, ...shape } = flatten(part, ctx);
    // An anyOf inside allOf states a condition, not a shape: steer handles it.
    const { anyOf: _any, oneOf: _one, ...plain } = shape;
    return merge(acc, plain, ctx);
  }, rest);
}

const CONDITIONS = [
  'not',
  'if',
  'allOf',
  'anyOf',
  'oneOf',
  'contains',
  'dependentRequired',
  'dependentSchemas',
];

const STEER_CANDIDATES = 6;

/**
 * Of a few candidates, the first the schema accepts (else the first): keeps the valid side
 * frequent where a schema states conditions, without a filter that could spin forever.
 */
function steer(
  arb: fc.Arbitrary<unknown>,
  schema: Schema,
  ctx: SchemaContext,
): fc.Arbitrary<unknown> {
  const accepts = ctx.accepts;
  if (!accepts || !CONDITIONS.some((key) => key in schema)) return arb;
  // Drawn one at a time, only as many as it takes: nested schemas steer at every level, and
  // six eager candidates a level multiply into millions of values three levels down.
  return fc.infiniteStream(arb).map((candidates) => {
    let first: unknown;
    let drawn = 0;
    for (const value of candidates) {
      if (drawn === 0) first = value;
      if (accepts(schema, value)) return value;
      if (++drawn === STEER_CANDIDATES) break;
    }
    return first;
  });
}

const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

function withHints(arb: fc.Arbitrary<unknown>, hints: readonly unknown[]): fc.Arbitrary<unknown> {
  if (hints.length === 0) return arb;
  return fc.oneof(
    { weight: 1, arbitrary: arb },
    { weight: 1, arbitrary: fc.constantFrom(...hints) },
  );
}

/** A value the schema should accept (usually: the oracle decides). */
export function validValue(
  schema: unknown,
  ctx: SchemaContext,
  name?: string,
): fc.Arbitrary<unknown> {
  return steer(withHints(plainValid(schema, ctx, name), ctx.hints(name)), deref(schema, ctx), ctx);
}

function plainValid(raw: unknown, ctx: SchemaContext, name?: string): fc.Arbitrary<unknown> {
  if (raw === true || raw === undefined) return anyJson(ctx);
  const schema = flatten(raw, ctx);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const options = branches(schema, ctx);
  if (options) {
    // An if/then/else branch is only a shape: steering it too would steer every nested level
    // of a recursive schema again, multiplying the arbitraries.
    const each = schema.if === undefined ? validValue : plainValid;
    return fc.oneof(...options.map((branch) => each(branch, ctx, name)));
  }
  const types = typesOf(schema);
  // Nothing said about the type: any small JSON value (and no endless nesting).
  if (types.length === JSON_TYPES.length) return anyJson(ctx);
  const arbs = types.map((type) => validOfType(type, schema, ctx, name));
  return arbs.length === 1 ? (arbs[0] as fc.Arbitrary<unknown>) : fc.oneof(...arbs);
}

function validOfType(type: string, s: Schema, ctx: SchemaContext, name?: string) {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer': {
      const min = Math.max(num(s.minimum) ?? -WIDE, (num(s.exclusiveMinimum) ?? -WIDE - 1) + 1);
      const max = Math.min(num(s.maximum) ?? WIDE, (num(s.exclusiveMaximum) ?? WIDE + 1) - 1);
      return fc.integer({ min: Math.ceil(min), max: Math.floor(max) });
    }
    case 'number': {
      const min = num(s.minimum) ?? num(s.exclusiveMinimum) ?? -WIDE;
      const max = num(s.maximum) ?? num(s.exclusiveMaximum) ?? WIDE;
      return fc.oneof(
        fc.integer({ min: Math.ceil(min), max: Math.floor(max) }),
        fc.double({ min, max, noNaN: true, noDefaultInfinity: true }),
      );
    }
    case 'string':
      return validString(s, ctx);
    case 'array':
      return validArray(s, ctx, name);
    case 'object':
      return validObject(s, ctx);
    default:
      return anyJson(ctx);
  }
}

/** What a header value can be once HTTP has trimmed it. */
export const HEADER_TEXT = /^([\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?)?$/;
const PRINTABLE = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c));
/** Mostly readable text; one character in five anywhere in Unicode (no lone surrogates). */
const ANY_TEXT = fc.oneof(
  { weight: 4, arbitrary: PRINTABLE },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
);

function textUnit(ctx: SchemaContext) {
  return ctx.ascii ? PRINTABLE : ANY_TEXT;
}

function validString(s: Schema, ctx: SchemaContext): fc.Arbitrary<unknown> {
  const minLength = num(s.minLength) ?? 0;
  const maxLength = num(s.maxLength) ?? minLength + 60;
  const fits = (text: string) => {
    const length = [...text].length;
    return length >= minLength && length <= maxLength;
  };
  const kit = typeof s.format === 'string' ? FORMATS[s.format] : undefined;
  if (kit) {
    const pattern = typeof s.pattern === 'string' ? new RegExp(s.pattern, 'u') : undefined;
    const ok = (text: string) => fits(text) && (pattern === undefined || pattern.test(text));
    return fc
      .array(kit.valid(s), { minLength: 6, maxLength: 6 })
      .map((candidates) => candidates.find(ok) ?? (candidates[0] as string));
  }
  if (typeof s.pattern === 'string') {
    let matching: fc.Arbitrary<string>;
    try {
      matching = fc.stringMatching(new RegExp(s.pattern, 'u'));
    } catch {
      return fc.string({ minLength, maxLength });
    }
    // Patterns without anchors match longer strings too; keep what fits the lengths (and,
    // for a header, what a header can carry), from a few candidates.
    const ok = (text: string) => fits(text) && (!ctx.ascii || HEADER_TEXT.test(text));
    return fc
      .array(matching, { minLength: 6, maxLength: 6 })
      .map((candidates) => candidates.find(ok) ?? (candidates[0] as string));
  }
  const unit = textUnit(ctx);
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.string({ unit, minLength, maxLength: Math.min(maxLength, minLength + 24) }),
    },
    { weight: 1, arbitrary: fc.string({ unit, minLength: maxLength, maxLength }) },
  );
}

/** Items are hinted apart from their array: `dependencies[]` names one gid. */
const itemName = (name?: string) => (name === undefined ? undefined : `${name}[]`);

function validArray(s: Schema, ctx: SchemaContext, name?: string): fc.Arbitrary<unknown> {
  const items = deref(s.items ?? true, ctx);
  const minLength = num(s.minItems) ?? 0;
  let maxLength = num(s.maxItems) ?? minLength + 4;
  if (s.uniqueItems && Array.isArray(items.enum))
    maxLength = Math.min(maxLength, items.enum.length);
  const item = validValue(items, ctx, itemName(name));
  const small = Math.min(maxLength, minLength + 4);
  const make = (max: number) =>
    s.uniqueItems
      ? fc.uniqueArray(item, { minLength, maxLength: max, selector: (v) => JSON.stringify(v) })
      : fc.array(item, { minLength, maxLength: max });
  return small === maxLength
    ? make(maxLength)
    : fc.oneof({ weight: 5, arbitrary: make(small) }, { weight: 1, arbitrary: make(maxLength) });
}

const ABSENT = Symbol('absent');

/**
 * Objects with each optional member present half the time (fc.record sends five in six): where
 * members exclude or imply one another, fewer of them together keeps valid objects frequent.
 */
function validObject(s: Schema, ctx: SchemaContext): fc.Arbitrary<unknown> {
  const properties = (s.properties ?? {}) as Record<string, unknown>;
  const required = new Set(((s.required as string[]) ?? []).filter((key) => key in properties));
  const members = Object.entries(properties).map(([key, sub]) => {
    const value = validValue(sub, ctx, key);
    const slot = required.has(key) ? value : fc.option(value, { nil: ABSENT, freq: 2 });
    return slot.map((v): [string, unknown] => [key, v]);
  });
  return fc
    .tuple(...members)
    .map((pairs) => Object.fromEntries(pairs.filter(([, v]) => v !== ABSENT)));
}

function anyJson(ctx: SchemaContext): fc.Arbitrary<unknown> {
  const unit = textUnit(ctx);
  return fc.oneof(
    fc.string({ unit, maxLength: 8 }),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.constant([]),
    fc.constant({}),
  );
}

// ---------------------------------------------------------------- formats

interface FormatKit {
  valid(s: Schema): fc.Arbitrary<string>;
  invalid: readonly string[];
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const isoDay = (d: Date) => d.toISOString().slice(0, 10);

function dayRange(s: Schema): { min: Date; max: Date } {
  const bound = (value: unknown, fallback: string) =>
    new Date(`${typeof value === 'string' ? value.slice(0, 10) : fallback}T00:00:00Z`);
  const min = bound(s.formatMinimum ?? s.formatExclusiveMinimum, '0001-01-01');
  const max = bound(s.formatMaximum ?? s.formatExclusiveMaximum, '9999-12-31');
  if (s.formatExclusiveMinimum) min.setUTCDate(min.getUTCDate() + 1);
  if (s.formatExclusiveMaximum) max.setUTCDate(max.getUTCDate() - 1);
  return { min, max };
}

const dayArb = (s: Schema) => {
  const { min, max } = dayRange(s);
  const now = new Date();
  return fc.oneof(
    fc.date({ min, max, noInvalidDate: true }),
    fc.constantFrom(min, max),
    fc.date({
      min: new Date(Math.max(+min, +now - 400 * 864e5)),
      max: new Date(Math.min(+max, +now + 400 * 864e5)),
      noInvalidDate: true,
    }),
  );
};

/** RFC 3339 date-times in the renderings the standard validator accepts. */
const dateTimeArb = (s: Schema) =>
  fc
    .record({
      day: dayArb(s),
      h: fc.integer({ min: 0, max: 23 }),
      m: fc.integer({ min: 0, max: 59 }),
      sec: fc.integer({ min: 0, max: 59 }),
      fraction: fc.constantFrom('', '.5', '.123', '.123456789'),
      zone: fc.oneof(
        fc.constantFrom('Z', 'z', '+00:00', '-00:00', '+05:30', '-08:00', '+14:00', '-12:00'),
        fc
          .tuple(
            fc.constantFrom('+', '-'),
            fc.integer({ min: 0, max: 23 }),
            fc.integer({ min: 0, max: 59 }),
          )
          .map(([sign, h, m]) => `${sign}${pad(h)}:${pad(m)}`),
      ),
      separator: fc.constantFrom('T', 'T', 't', ' '),
    })
    .map(
      ({ day, h, m, sec, fraction, zone, separator }) =>
        `${isoDay(day)}${separator}${pad(h)}:${pad(m)}:${pad(sec)}${fraction}${zone}`,
    );

const FORMATS: Record<string, FormatKit> = {
  date: {
    valid: (s) => dayArb(s).map(isoDay),
    invalid: [
      '2026-02-30',
      '2026-13-01',
      '2026-1-01',
      '26-01-01',
      '2026-01-01T00:00:00Z',
      '20260101',
      'today',
    ],
  },
  'date-time': {
    valid: dateTimeArb,
    invalid: [
      '2026-01-01T00:00:00',
      '2026-01-01',
      '2026-02-30T00:00:00Z',
      '2026-01-01T24:00:00Z',
      '2026-01-01T00:00:00+24:00',
      '2026-01-01X00:00:00Z',
      'now',
    ],
  },
  uuid: {
    valid: () => fc.uuid().chain((id) => fc.constantFrom(id, id.toUpperCase(), `urn:uuid:${id}`)),
    invalid: [
      '123e4567-e89b-12d3-a456-42661417400g',
      '123e4567e89b12d3a456426614174000',
      '{123e4567-e89b-12d3-a456-426614174000}',
      'x',
    ],
  },
};

/** Dates just past the schema's formatMinimum/formatMaximum. */
function pastFormatBounds(s: Schema): string[] {
  const out: string[] = [];
  const shift = (value: unknown, days: number) => {
    const d = new Date(`${String(value).slice(0, 10)}T00:00:00Z`);
    d.setUTCDate(d.getUTCDate() + days);
    return s.format === 'date' ? isoDay(d) : `${isoDay(d)}T00:00:00Z`;
  };
  if (s.formatMinimum !== undefined)
    out.push(
      shift(s.formatMinimum, -1),
      s.format === 'date' ? '0001-01-01' : '0001-01-01T00:00:00Z',
    );
  if (s.formatMaximum !== undefined)
    out.push(
      shift(s.formatMaximum, 1),
      s.format === 'date' ? '9999-12-31' : '9999-12-31T23:59:59Z',
    );
  return out;
}

// ---------------------------------------------------------------- near misses

const tag =
  (mutation: string) =>
  (value: unknown): Mutated => ({ value, mutation });

/** A value one mutation away from one the schema accepts. */
export function nearMiss(raw: unknown, ctx: SchemaContext, name?: string): fc.Arbitrary<Mutated> {
  const original = deref(raw, ctx);
  const schema = flatten(raw, ctx);
  const options: Array<fc.Arbitrary<Mutated>> = [];
  const types = typesOf(schema);
  const others = JSON_TYPES.filter(
    (t) => !types.includes(t) && !(t === 'integer' && types.includes('number')),
  );
  if (others.length > 0) {
    options.push(
      fc.constantFrom(...others).chain((t) => sampleOfType(t, ctx).map(tag(`wrong type (${t})`))),
    );
  }
  if (Array.isArray(schema.enum)) {
    const enumOptions = schema.enum.filter((v): v is string => typeof v === 'string');
    if (enumOptions.length > 0) {
      options.push(
        fc
          .tuple(
            fc.constantFrom(...enumOptions),
            fc.constantFrom('upper', 'suffix', 'space', 'empty'),
          )
          .map(([v, how]) =>
            tag(`not in enum (${how})`)(
              how === 'upper'
                ? v.toUpperCase()
                : how === 'suffix'
                  ? `${v}x`
                  : how === 'space'
                    ? ` ${v}`
                    : '',
            ),
          ),
      );
    }
  }
  const alternatives = branches(schema, ctx);
  if (alternatives) {
    options.push(fc.oneof(...alternatives.map((branch) => nearMiss(branch, ctx, name))));
  }
  if (!Array.isArray(schema.enum) && types.length < JSON_TYPES.length) {
    if (types.includes('string')) options.push(...stringMisses(schema, ctx));
    if (types.includes('integer') || types.includes('number'))
      options.push(...numberMisses(schema, types));
    if (types.includes('array')) options.push(...arrayMisses(schema, ctx, name));
    if (types.includes('object')) options.push(...objectMisses(schema, ctx, original));
  }
  if (options.length === 0) return sampleOfType('string', ctx).map(tag('arbitrary value'));
  return fc.oneof(...options);
}

function sampleOfType(type: string, ctx: SchemaContext): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string':
      return fc.constantFrom('abc', '', '1', 'true', 'null');
    case 'integer':
      return fc.constantFrom(0, 1, -1, 7);
    case 'number':
      return fc.constantFrom(1.5, -0.25);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.constantFrom([], ['a'], [1]);
    default:
      return ctx.ascii ? fc.constant('{}') : fc.constantFrom({}, { a: 1 });
  }
}

function stringMisses(s: Schema, ctx: SchemaContext): Array<fc.Arbitrary<Mutated>> {
  const out: Array<fc.Arbitrary<Mutated>> = [];
  const minLength = num(s.minLength);
  const maxLength = num(s.maxLength);
  const unit = textUnit(ctx);
  if (minLength !== undefined && minLength > 0) {
    out.push(
      fc
        .string({ unit, minLength: minLength - 1, maxLength: minLength - 1 })
        .map(tag('shorter than minLength')),
    );
  }
  if (maxLength !== undefined) {
    out.push(
      fc
        .string({ unit, minLength: maxLength + 1, maxLength: maxLength + 3 })
        .map(tag('longer than maxLength')),
    );
  }
  if (typeof s.pattern === 'string') {
    const intruders = ctx.ascii
      ? [' ', '.', '/', '%', '~', '*']
      : [' ', '.', '/', '%', 'é', '\n', '😀', '\u0000'];
    out.push(
      fc
        .tuple(
          validString(
            { ...s, minLength: undefined, maxLength: undefined, pattern: s.pattern },
            ctx,
          ),
          fc.constantFrom(...intruders),
          fc.nat(),
        )
        .map(([text, bad, at]) => {
          const str = String(text);
          const i = str.length === 0 ? 0 : at % (str.length + 1);
          return tag(`pattern broken by ${JSON.stringify(bad)}`)(
            str.slice(0, i) + bad + str.slice(i),
          );
        }),
      fc
        .string({ unit, minLength: minLength ?? 0, maxLength: Math.min(maxLength ?? 20, 20) })
        .map(tag('arbitrary text against the pattern')),
    );
  }
  const kit = typeof s.format === 'string' ? FORMATS[s.format] : undefined;
  if (kit) {
    out.push(fc.constantFrom(...kit.invalid).map(tag(`not a ${s.format}`)));
    const bounds = pastFormatBounds(s);
    if (bounds.length > 0)
      out.push(fc.constantFrom(...bounds).map(tag(`${s.format} out of bounds`)));
  }
  return out;
}

function numberMisses(s: Schema, types: string[]): Array<fc.Arbitrary<Mutated>> {
  const out: Array<fc.Arbitrary<Mutated>> = [];
  const minimum = num(s.minimum) ?? num(s.exclusiveMinimum);
  const maximum = num(s.maximum) ?? num(s.exclusiveMaximum);
  if (minimum !== undefined) {
    const edge = s.minimum !== undefined ? minimum - 1 : minimum;
    out.push(fc.constantFrom(edge, minimum - 1000, -(2 ** 53)).map(tag('below minimum')));
  }
  if (maximum !== undefined) {
    const edge = s.maximum !== undefined ? maximum + 1 : maximum;
    out.push(fc.constantFrom(edge, maximum * 10 + 1, 2 ** 63).map(tag('above maximum')));
  }
  if (types.includes('integer') && !types.includes('number')) {
    out.push(fc.constantFrom((minimum ?? 0) + 0.5, 1.25).map(tag('not an integer')));
  }
  return out;
}

function arrayMisses(s: Schema, ctx: SchemaContext, name?: string): Array<fc.Arbitrary<Mutated>> {
  const out: Array<fc.Arbitrary<Mutated>> = [];
  const items = deref(s.items ?? true, ctx);
  const item = validValue(items, ctx, itemName(name));
  const minItems = num(s.minItems) ?? 0;
  const maxItems = num(s.maxItems);
  if (minItems > 0) {
    out.push(
      fc
        .array(item, { minLength: minItems - 1, maxLength: minItems - 1 })
        .map(tag('fewer than minItems')),
    );
  }
  if (maxItems !== undefined) {
    out.push(
      fc
        .array(item, { minLength: maxItems + 1, maxLength: maxItems + 2 })
        .map(tag('more than maxItems')),
    );
  }
  if (s.uniqueItems) {
    out.push(
      fc
        .array(item, {
          minLength: Math.max(1, minItems - 1),
          maxLength: Math.max(1, Math.min(3, (maxItems ?? 3) - 1)),
        })
        .map((list) => tag('duplicate items')([...list, list[0]])),
    );
  }
  if (s.items !== undefined) {
    out.push(
      fc
        .tuple(
          validArray({ ...s, minItems: Math.max(minItems, 1) }, ctx, name),
          nearMiss(items, ctx, itemName(name)),
          fc.nat(),
        )
        .map(([list, bad, at]) => {
          const copy = [...(list as unknown[])];
          const i = copy.length === 0 ? 0 : at % copy.length;
          copy[i] = bad.value;
          return { value: copy, mutation: `item ${i}: ${bad.mutation}` };
        }),
    );
  }
  return out;
}

function objectMisses(
  s: Schema,
  ctx: SchemaContext,
  original: Schema,
): Array<fc.Arbitrary<Mutated>> {
  const out: Array<fc.Arbitrary<Mutated>> = [];
  const properties = (s.properties ?? {}) as Record<string, unknown>;
  const required = (s.required as string[]) ?? [];
  const base = steer(validObject(s, ctx), original, ctx).map((v) =>
    typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {},
  );
  if (required.length > 0) {
    out.push(
      fc.tuple(base, fc.constantFrom(...required)).map(([value, key]) => {
        const { [key]: _dropped, ...rest } = value;
        return tag(`missing required ${key}`)(rest);
      }),
    );
  }
  if (s.additionalProperties === false || s.unevaluatedProperties === false) {
    out.push(
      fc
        .tuple(
          base,
          fc.constantFrom('unknown', 'Name', 'extra_member', '__proto__'),
          sampleOfType('string', ctx),
        )
        .map(([value, key, extra]) => {
          const copy = { ...value };
          Object.defineProperty(copy, key, {
            value: extra,
            enumerable: true,
            writable: true,
            configurable: true,
          });
          return tag(`unknown member ${key}`)(copy);
        }),
    );
  }
  const keys = Object.keys(properties);
  if (keys.length > 0) {
    out.push(
      fc.constantFrom(...keys).chain((key) =>
        fc.tuple(base, nearMiss(properties[key], ctx, key)).map(([value, bad]) => ({
          value: { ...value, [key]: bad.value },
          mutation: `${key}: ${bad.mutation}`,
        })),
      ),
    );
  }
  // Members the document says may not come together (`not: {required: [a, b]}`).
  const exclusive = exclusivePairs(original, ctx);
  if (exclusive.length > 0) {
    out.push(
      fc.constantFrom(...exclusive).chain((pair) =>
        fc
          .tuple(base, ...pair.map((key) => validValue(properties[key], ctx, key)))
          .map(([value, ...both]) => {
            const copy = { ...value };
            pair.forEach((key, i) => {
              copy[key] = both[i];
            });
            return tag(`both of ${pair.join(' and ')}`)(copy);
          }),
      ),
    );
  }
  return out;
}

/** Sets of members a `not: {required: […]}` (also inside allOf/anyOf) forbids together. */
export function exclusivePairs(s: Schema, ctx: SchemaContext): string[][] {
  const found: string[][] = [];
  const visit = (node: unknown) => {
    const schema = deref(node, ctx);
    const not = schema.not as Schema | undefined;
    if (not && Array.isArray(not.required)) found.push(not.required as string[]);
    for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
      if (Array.isArray(schema[key])) for (const sub of schema[key] as unknown[]) visit(sub);
    }
  };
  visit(s);
  // oneOf of branches that each require a different member: sending two of them is the miss.
  const oneOf = s.oneOf as Schema[] | undefined;
  if (oneOf?.every((b) => Array.isArray(deref(b, ctx).required))) {
    const members = oneOf.flatMap((b) => deref(b, ctx).required as string[]);
    if (members.length >= 2) found.push([...new Set(members)].slice(0, 2));
  }
  return found;
}
