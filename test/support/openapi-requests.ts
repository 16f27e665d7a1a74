import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import {
  deref,
  HEADER_TEXT,
  nearMiss,
  type Schema,
  type SchemaContext,
  typesOf,
  validValue,
} from './schema-arbitraries.ts';

/**
 * Requests drawn from an OpenAPI 3.1 document, and the document's own verdict on each, read
 * the way a third-party consumer reads it (Schemathesis, an API gateway): a standard JSON
 * Schema 2020-12 validator over the parameters and the body, nothing of the service's own.
 */

type Json = any;
export type Location = 'path' | 'query' | 'header';

export interface Parameter {
  name: string;
  in: Location;
  required: boolean;
  schema: Schema;
  /** JSON pointer of the schema inside the document. */
  at: string;
  description: string;
  /**
   * Declared by `content: {application/json: {schema}}` rather than `schema`: one query value,
   * the JSON text of a value of `schema`.
   */
  json: boolean;
}

export interface Operation {
  method: string;
  template: string;
  /** `POST /api/v1/tasks`. */
  label: string;
  operation: Json;
  parameters: Parameter[];
  body?: { required: boolean; schema: Schema; at: string };
  /** Which credential the document asks for. */
  security: 'bearer' | 'master' | 'none';
}

/** One request as it travels: every value already a wire string (the body as JSON). */
export interface RequestCase {
  path: Record<string, string>;
  query: Array<[string, string]>;
  headers: Record<string, string>;
  /** Absent: no body at all. */
  body?: { json: unknown };
  /** How the case was made: `valid` or the one mutation applied. */
  mutation: string;
}

export interface DocumentVerdict {
  valid: boolean;
  /** `query.limit: must be <= 100`, one per failed keyword. */
  errors: string[];
  /** Locations that failed (`header.Idempotency-Key`), for the 400-or-422 choice. */
  failed: string[];
}

const escapePointer = (part: string) => part.replace(/~/g, '~0').replace(/\//g, '~1');
const DOC_ID = 'published.json';

/** The API operations of a document: everything under `/api/`, platform routes left out. */
export function listOperations(doc: Json): Operation[] {
  const out: Operation[] = [];
  for (const [template, item] of Object.entries<Json>(doc.paths)) {
    if (!template.startsWith('/api/')) continue;
    for (const method of ['get', 'put', 'post', 'delete', 'patch']) {
      const operation = item[method];
      if (!operation) continue;
      const base = `#/paths/${escapePointer(template)}/${method}`;
      const parameters: Parameter[] = [];
      const listed = [
        ...(item.parameters ?? []).map((p: Json, i: number) => [
          p,
          `#/paths/${escapePointer(template)}/parameters/${i}`,
        ]),
        ...(operation.parameters ?? []).map((p: Json, i: number) => [p, `${base}/parameters/${i}`]),
      ];
      for (const [raw, rawAt] of listed) {
        const at = typeof raw.$ref === 'string' ? raw.$ref : rawAt;
        const p = typeof raw.$ref === 'string' ? resolvePointer(doc, raw.$ref) : raw;
        if (!['path', 'query', 'header'].includes(p.in)) continue;
        const jsonContent = p.content?.['application/json'];
        const json =
          p.in === 'query' && jsonContent && Object.keys(p.content).length === 1 && !p.style;
        if (
          (p.style && p.style !== (p.in === 'query' ? 'form' : 'simple')) ||
          (p.content && !json)
        ) {
          throw new Error(
            `${method} ${template}: parameter ${p.name} uses a serialisation this test does not model`,
          );
        }
        const schema = (json ? jsonContent.schema : p.schema) ?? {};
        parameters.push({
          name: p.name,
          in: p.in,
          required: p.required === true,
          schema,
          at: json ? `${at}/content/application~1json/schema` : `${at}/schema`,
          description: `${p.description ?? ''} ${schema.description ?? ''}`,
          json: Boolean(json),
        });
      }
      const json = operation.requestBody?.content?.['application/json'];
      const security = JSON.stringify(operation.security ?? doc.security ?? []);
      out.push({
        method: method.toUpperCase(),
        template,
        label: `${method.toUpperCase()} ${template}`,
        operation,
        parameters,
        body: json
          ? {
              required: operation.requestBody.required === true,
              schema: json.schema ?? {},
              at: `${base}/requestBody/content/application~1json/schema`,
            }
          : undefined,
        security: security.includes('masterKey')
          ? 'master'
          : security.includes('bearer')
            ? 'bearer'
            : 'none',
      });
    }
  }
  return out;
}

export function resolvePointer(doc: Json, ref: string): Json {
  return ref
    .replace(/^#\//, '')
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((node, key) => node?.[key], doc);
}

// ---------------------------------------------------------------- generation

type Hints = (name: string | undefined) => readonly unknown[];
/**
 * Query parameter names an operation may not list: near misses of real ones (case, spelling),
 * names other operations take, bracketed and prototype names a query parser may treat apart.
 */
const UNLISTED_QUERY = [
  'unknown',
  'Page',
  'per-page',
  'sort_by',
  'limit',
  'offset',
  'page',
  'status',
  'created_at[gt]',
  'x[y]',
  '__proto__',
  'constructor',
];
const SKIP = Symbol('not sendable');
/** Texts no JSON parser takes: cut short, JavaScript rather than JSON, empty, bare words. */
const NOT_JSON = ['', '{', '{"metrics":["tasks_created"]', "{'a':1}", '{a:1}', '[1,]', 'NaN', 'x'];

/**
 * Typed values on the wire, as OpenAPI's default styles put them: query `form` + `explode`
 * (an array is the parameter repeated), path and header `simple` (an array joined by commas).
 */
function toWire(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * Longest JSON query value sent: past about 16 KiB of request head Node answers 431 before any
 * route runs, whatever the document says of the value (the parameter's description says so).
 */
const MAX_JSON_QUERY_CHARS = 8_000;

/** A parameter's value, or (`wires`) query text sent as it is, once per item. */
type Slot = { v: unknown; wires?: string[] };

function place(param: Parameter, slot: Slot, into: RequestCase): typeof SKIP | undefined {
  const { v: value, wires } = slot;
  if (param.json || wires) {
    // JSON.stringify gives undefined for undefined: `null` is what JSON carries of it.
    const texts = wires ?? [JSON.stringify(value) ?? 'null'];
    if (texts.some((text) => encodeURIComponent(text).length > MAX_JSON_QUERY_CHARS)) return SKIP;
    for (const text of texts) into.query.push([param.name, text]);
    return;
  }
  if (param.in === 'query') {
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) into.query.push([param.name, toWire(v)]);
    return;
  }
  const wire = Array.isArray(value) ? value.map(toWire).join(',') : toWire(value);
  if (param.in === 'path') {
    // An empty segment or a dot segment changes which route the URL names.
    if (wire === '' || wire === '.' || wire === '..') return SKIP;
    into.path[param.name] = wire;
  } else {
    if (!HEADER_TEXT.test(wire)) return SKIP;
    into.headers[param.name] = wire;
  }
}

/** A standard validator for sub-schemas met while generating (steering only, never the verdict). */
const steering = addFormats(new Ajv2020({ strict: false }));
const steerers = new WeakMap<object, ValidateFunction | null>();
function accepts(schema: Schema, value: unknown): boolean {
  let validate = steerers.get(schema);
  if (validate === undefined) {
    try {
      validate = steering.compile(schema);
    } catch {
      validate = null; // a $ref it cannot follow: no steering there
    }
    steerers.set(schema, validate);
  }
  return validate === null ? true : validate(value) === true;
}

function contextFor(doc: Json, hints: Hints, ascii = false): SchemaContext {
  return { resolve: (ref) => resolvePointer(doc, ref), hints, ascii, accepts };
}

/**
 * Requests for `op`: about half valid by construction, half with one mutation (a parameter or
 * a body member made invalid, a required one left out, a scalar parameter sent twice, the body
 * left out); only mutated ones with `mutationsOnly`. Cases that cannot be sent as written (an
 * empty path segment) come out as null.
 */
export function requestArbitrary(
  doc: Json,
  op: Operation,
  hints: Hints,
  { mutationsOnly = false }: { mutationsOnly?: boolean } = {},
): fc.Arbitrary<RequestCase | null> {
  const ctxFor = (p?: Parameter) => contextFor(doc, hints, p?.in === 'header');
  const validParams = fc.tuple(
    ...op.parameters.map((p) =>
      p.required
        ? validValue(p.schema, ctxFor(p), p.name).map((v) => ({ v }))
        : // Half the time left out: each optional one sent less often, more cases reach the service.
          fc.option(
            validValue(p.schema, ctxFor(p), p.name).map((v) => ({ v })),
            { nil: undefined, freq: 2 },
          ),
    ),
  );
  const validBody = op.body
    ? validValue(op.body.schema, contextFor(doc, hints)).map((v) => ({ v }))
    : fc.constant(undefined);

  type Plan = {
    params: Array<Slot | undefined>;
    body: { v: unknown } | undefined;
    mutation: string;
    /** A query parameter the operation does not list. */
    extra?: [string, string];
  };
  const valid: fc.Arbitrary<Plan> = fc.record({
    params: validParams,
    body: validBody,
    mutation: fc.constant('valid'),
  });

  const mutations: Array<fc.Arbitrary<Plan>> = [];
  op.parameters.forEach((p, i) => {
    const at = `${p.in}.${p.name}`;
    mutations.push(
      fc.tuple(valid, nearMiss(p.schema, ctxFor(p), p.name)).map(([plan, bad]) => {
        const params = [...plan.params];
        params[i] = { v: bad.value };
        return { ...plan, params, mutation: `${at}: ${bad.mutation}` };
      }),
    );
    /** The parameter given twice, two valid values, put on the wire by `as`. */
    const sentTwice = (as: (a: unknown, b: unknown) => Slot) =>
      fc
        .tuple(
          valid,
          validValue(p.schema, ctxFor(p), p.name),
          validValue(p.schema, ctxFor(p), p.name),
        )
        .map(([plan, a, b]) => {
          const params = [...plan.params];
          params[i] = as(a, b);
          return { ...plan, params, mutation: `${at}: sent twice` };
        });
    if (p.required && p.in !== 'path') {
      mutations.push(
        valid.map((plan) => ({
          ...plan,
          params: plan.params.map((v, j) => (j === i ? undefined : v)),
          mutation: `${at}: missing`,
        })),
      );
    }
    if (p.json) {
      // The text itself wrong: not JSON at all, or the parameter given twice.
      mutations.push(
        fc.tuple(valid, fc.constantFrom(...NOT_JSON)).map(([plan, text]) => {
          const params = [...plan.params];
          params[i] = { v: undefined, wires: [text] };
          return { ...plan, params, mutation: `${at}: not JSON` };
        }),
        sentTwice((a, b) => ({
          v: undefined,
          wires: [a, b].map((v) => JSON.stringify(v) ?? 'null'),
        })),
      );
      return;
    }
    const scalar =
      !typesOf(deref(p.schema, ctxFor(p))).includes('array') && !(p.schema.anyOf ?? p.schema.oneOf);
    if (p.in === 'query' && scalar) {
      mutations.push(sentTwice((a, b) => ({ v: [a, b] })));
    }
  });
  const unlisted = UNLISTED_QUERY.filter(
    (name) => !op.parameters.some((p) => p.in === 'query' && p.name === name),
  );
  mutations.push(
    fc
      .tuple(valid, fc.constantFrom(...unlisted), fc.constantFrom('1', 'x', '', 'true'))
      .map(([plan, name, value]) => ({
        ...plan,
        extra: [name, value] as [string, string],
        mutation: `query.${name}: not listed`,
      })),
  );
  if (op.body) {
    const body = op.body;
    mutations.push(
      fc.tuple(valid, nearMiss(body.schema, contextFor(doc, hints))).map(([plan, bad]) => ({
        ...plan,
        body: { v: bad.value },
        mutation: `body: ${bad.mutation}`,
      })),
    );
    if (body.required)
      mutations.push(
        valid.map((plan) => ({ ...plan, body: undefined, mutation: 'body: missing' })),
      );
  }

  const plans =
    mutations.length === 0
      ? valid
      : mutationsOnly
        ? fc.oneof(...mutations)
        : fc.oneof(valid, fc.oneof(...mutations));
  return plans.map((plan) => {
    const out: RequestCase = { path: {}, query: [], headers: {}, mutation: plan.mutation };
    for (const [i, p] of op.parameters.entries()) {
      const slot = plan.params[i];
      if (slot && place(p, slot, out) === SKIP) return null;
    }
    if (plan.extra) out.query.push(plan.extra);
    // What JSON carries: NaN and -0 do not survive, so the verdict is on the round trip.
    if (plan.body) out.body = { json: JSON.parse(JSON.stringify(plan.body.v) ?? 'null') };
    return out;
  });
}

// ---------------------------------------------------------------- the document's verdict

/**
 * Reads a wire string as the parameter's schema types say, as an OpenAPI consumer does before
 * validating: `^-?[0-9]+$` is an integer where the schema allows one, a JSON number literal a
 * number, `true`/`false` a boolean; anything else stays the string it is.
 */
export function coerce(wire: string, schema: Schema, doc: Json): unknown {
  const ctx = contextFor(doc, () => []);
  const s = deref(schema, ctx);
  const types = new Set([
    ...typesOf(s),
    ...(((s.anyOf ?? s.oneOf) as Schema[] | undefined) ?? []).flatMap((b) =>
      typesOf(deref(b, ctx)),
    ),
  ]);
  if ((types.has('integer') || types.has('number')) && /^-?[0-9]+$/.test(wire)) return Number(wire);
  if (types.has('number') && /^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/.test(wire))
    return Number(wire);
  if (types.has('boolean') && (wire === 'true' || wire === 'false')) return wire === 'true';
  return wire;
}

/** Query values of one name: one occurrence is a scalar unless only an array will do. */
function gatherQuery(p: Parameter, values: string[], doc: Json): unknown {
  const ctx = contextFor(doc, () => []);
  const s = deref(p.schema, ctx);
  const branches = ((s.anyOf ?? s.oneOf) as Schema[] | undefined)?.map((b) => deref(b, ctx)) ?? [s];
  const arrayBranch = branches.find((b) => typesOf(b).includes('array'));
  const scalarAllowed = branches.some((b) => typesOf(b).some((t) => t !== 'array'));
  if (values.length === 1 && (scalarAllowed || !arrayBranch))
    return coerce(values[0] as string, p.schema, doc);
  const items = arrayBranch ? deref(arrayBranch.items ?? {}, ctx) : {};
  return values.map((v) => coerce(v, items, doc));
}

export function documentOracle(doc: Json) {
  // strict off: the document carries OpenAPI keywords Ajv does not know. No keyword or format
  // of the service's own: ajv-formats' formats and formatMinimum/formatMaximum only.
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  ajv.addSchema(doc, DOC_ID);
  const compiled = new Map<string, ValidateFunction>();
  const at = (pointer: string) => {
    let validate = compiled.get(pointer);
    if (!validate) {
      validate = ajv.compile({ $ref: `${DOC_ID}${pointer}` });
      compiled.set(pointer, validate);
    }
    return validate;
  };
  const describe = (where: string, errors: ErrorObject[] | null | undefined) =>
    (errors ?? []).map(
      (e) =>
        `${where}${e.instancePath}: ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`,
    );

  return function verdict(op: Operation, req: RequestCase): DocumentVerdict {
    const errors: string[] = [];
    const failed: string[] = [];
    const check = (where: string, pointer: string, value: unknown) => {
      const validate = at(pointer);
      if (!validate(value)) {
        errors.push(...describe(where, validate.errors));
        failed.push(where);
      }
    };
    for (const p of op.parameters) {
      const where = `${p.in}.${p.name}`;
      let value: unknown;
      if (p.json) {
        const values = req.query.filter(([name]) => name === p.name).map(([, v]) => v);
        if (values.length === 0) {
          if (p.required) {
            errors.push(`${where}: required`);
            failed.push(where);
          }
          continue;
        }
        // One value, the JSON text of the schema's value: a second, or other text, is not one.
        const parsed = values.length === 1 ? parseJson(values[0] as string) : undefined;
        if (parsed === undefined) {
          errors.push(`${where}: ${values.length === 1 ? 'not JSON' : 'sent more than once'}`);
          failed.push(where);
        } else check(where, p.at, parsed.value);
        continue;
      }
      if (p.in === 'query') {
        const values = req.query.filter(([name]) => name === p.name).map(([, v]) => v);
        value = values.length === 0 ? undefined : gatherQuery(p, values, doc);
      } else {
        const wire = p.in === 'path' ? req.path[p.name] : req.headers[p.name];
        value = wire === undefined ? undefined : coerce(wire, p.schema, doc);
      }
      if (value === undefined) {
        if (p.required) {
          errors.push(`${where}: required`);
          failed.push(where);
        }
        continue;
      }
      check(where, p.at, value);
    }
    if (op.body) {
      if (req.body === undefined) {
        if (op.body.required) {
          errors.push('body: required');
          failed.push('body');
        }
      } else {
        check('body', op.body.at, req.body.json);
      }
    }
    return { valid: errors.length === 0, errors, failed };
  };
}

/** The value a JSON text holds, or undefined when it is not JSON. */
export function parseJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/** The URL path of a case: the template with its values percent-encoded. */
export function pathOf(op: Operation, req: RequestCase): string {
  const path = op.template.replace(/\{([^}]+)\}/g, (_, name: string) =>
    encodeURIComponent(req.path[name] ?? ''),
  );
  const query = new URLSearchParams(req.query).toString();
  return query ? `${path}?${query}` : path;
}
