import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { TIMEZONE_PATTERN } from '../../libs/analytics/parse/query.schemas.ts';
import { canonicalTimezone } from '../../libs/analytics/period/period.ts';
import { queryRoutes } from '../../libs/analytics/query.routes.ts';
import { buildOpenApi, toOpenApiPath } from '../../libs/http/openapi.ts';
import { IF_MATCH_PATTERN } from '../../libs/http/openapi-components.ts';
import { digitRange, mayMatchNul } from '../../libs/http/text-patterns.ts';
import { parseIfMatch } from '../../libs/tasks/task-etag.ts';
import { randomSecret } from '../support/auth.ts';
import { useCairn } from '../support/cairn.ts';
import { http } from '../support/http.ts';
import { openApiValidator } from '../support/openapi-validator.ts';

const METHODS = ['get', 'post', 'put', 'delete', 'patch'];

describe('GET /openapi.json', () => {
  let doc: any;
  let expectDocumented: ReturnType<typeof openApiValidator>;
  const cairn = useCairn({
    env: { CAIRN_MASTER_KEY: randomSecret() },
    businesses: ['oa'],
  });
  beforeAll(async () => {
    const res = await http(cairn.url, 'GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    doc = res.body;
    expectDocumented = openApiValidator(doc);
  });

  it('is a valid OpenAPI 3.1 document (swagger-parser, every $ref resolved)', async () => {
    expect(doc.openapi).toBe('3.1.0');
    await SwaggerParser.validate(structuredClone(doc));
    const ids = Object.values(doc.paths).flatMap((item: any) =>
      Object.values(item).map((op: any) => op.operationId),
    );
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('describes exactly the operations the app serves', () => {
    const served = (cairn.app as any).router.stack
      .filter((layer: any) => layer.route)
      .flatMap((layer: any) =>
        Object.keys(layer.route.methods)
          .filter((method) => METHODS.includes(method))
          .map((method) => `${method.toUpperCase()} ${toOpenApiPath(layer.route.path)}`),
      );
    const documented = Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
      Object.keys(item)
        .filter((method) => METHODS.includes(method))
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(new Set(documented)).toEqual(new Set(served));
    expect(documented.length).toBe(served.length);
  });

  it('declares the conventions: security, headers, problem and validation shapes', () => {
    const { components } = doc;
    expect(components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(Object.keys(components.schemas)).toEqual(
      expect.arrayContaining(['ResponseMeta', 'Problem', 'ValidationError', 'ValidationIssue']),
    );
    expect(components.responses.RateLimited.headers).toHaveProperty('Retry-After');
    const query = doc.paths['/api/v1/query'].post;
    expect(query.security).toEqual([{ bearerAuth: ['analytics:read'] }]);
    expect(query.requestBody.content['application/json'].schema.required).toEqual(['metrics']);
    // The query's own 422 (validation, or its memory cap), 429 and 503 (admission).
    expect(query.responses['422']).toEqual({ $ref: '#/components/responses/QueryUnprocessable' });
    expect(query.responses['429']).toEqual({ $ref: '#/components/responses/QueryRefused' });
    expect(query.responses['503']).toEqual({ $ref: '#/components/responses/QueryUnavailable' });
    expect(components.responses.QueryUnavailable.headers).toHaveProperty('Retry-After');
    expect(query.parameters).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
    expect(doc.paths['/api/v1/tokens'].post.security).toEqual([{ masterKey: [] }]);
    expect(doc.paths['/healthz'].get.security).toEqual([]);
    const getTask = doc.paths['/api/v1/tasks/{gid}'].get;
    expect(getTask.parameters[0]).toMatchObject({ name: 'gid', in: 'path', required: true });
    expect(getTask.responses['200'].headers).toHaveProperty('X-RateLimit-Remaining');
  });

  it('declares the GET form of /query: q as JSON of the POST body, ETag, Cache-Control and 304', () => {
    const { get, post } = doc.paths['/api/v1/query'];
    expect(get.security).toEqual(post.security);
    const [q, ...others] = get.parameters;
    // OpenAPI 3.1's way for a JSON-valued parameter: `content`, never beside a `schema`.
    expect(q).toMatchObject({ name: 'q', in: 'query', required: true });
    expect(q).not.toHaveProperty('schema');
    expect(Object.keys(q.content)).toEqual(['application/json']);
    expect(q.content['application/json'].schema).toEqual(
      post.requestBody.content['application/json'].schema,
    );
    expect(others).toContainEqual({ $ref: '#/components/parameters/IfNoneMatch' });
    expect(others).not.toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
    const cacheControl = { type: 'string', const: 'private, no-cache' };
    for (const status of ['200', '304']) {
      const response = get.responses[status];
      expect(response.headers.ETag, status).toEqual({ $ref: '#/components/headers/ETag' });
      expect(response.headers['Cache-Control'].schema, status).toEqual(cacheControl);
    }
    expect(get.responses['304']).not.toHaveProperty('content');
    expect(get.responses['200'].content).toEqual(post.responses['200'].content);
    for (const status of ['422', '429', '503']) {
      expect(get.responses[status], status).toEqual(post.responses[status]);
    }
    // The POST answers neither header.
    expect(post.responses['200'].headers).not.toHaveProperty('ETag');
    expect(post.responses['200'].headers).not.toHaveProperty('Cache-Control');
  });

  it('every secured operation answers an anonymous caller with its documented 401', async () => {
    for (const [path, item] of Object.entries(doc.paths) as Array<[string, any]>) {
      for (const [method, op] of Object.entries(item) as Array<[string, any]>) {
        if (op.security.length === 0) continue;
        const concrete = path.replace(/\{[^}]+\}/g, 'tok_0123456789abcdef');
        const res = await http(cairn.url, method.toUpperCase(), concrete, {
          ...(op.requestBody ? { body: {} } : {}),
        });
        expect(res.status, `${method} ${path}`).toBe(401);
        expectDocumented(method, path, res);
      }
    }
  });

  it('live responses match their documented schemas: success, 4xx problems and 422', async () => {
    const created = await http(cairn.url, 'POST', '/api/v1/tasks', {
      body: { business: 'oa', name: 'Describe the API', project: 'docs', due_on: '2026-12-01' },
      headers: { ...cairn.auth, 'Idempotency-Key': 'openapi-test-1' },
    });
    expect(created.status).toBe(201);
    expectDocumented('post', '/api/v1/tasks', created);
    const gid = created.body.data.gid;

    type Call = [string, string, string, Parameters<typeof http>[3], number];
    const query = (body: unknown, status: number): Call => [
      'post',
      '/api/v1/query',
      '/api/v1/query',
      { headers: cairn.auth, body },
      status,
    ];
    const calls: Call[] = [
      ['get', '/api/v1/tasks/{gid}', `/api/v1/tasks/${gid}`, { headers: cairn.auth }, 200],
      ['get', '/api/v1/tasks/{gid}', '/api/v1/tasks/missing', { headers: cairn.auth }, 404],
      ['get', '/api/v1/tasks/{gid}', '/api/v1/tasks/bad!gid', { headers: cairn.auth }, 422],
      query({ metrics: ['tasks_created'], dimensions: ['day'] }, 200),
      query(
        {
          metrics: ['tasks_created', 'completion_rate', 'open_tasks', 'p90_cycle_time_hours'],
          dimensions: ['hour'],
          period: 'today',
          timezone: 'Asia/Kathmandu',
          compare: 'previous_year',
          include: ['totals'],
        },
        200,
      ),
      query(
        {
          metrics: ['tasks_created', 'avg_cycle_time_hours'],
          dimensions: ['project', 'assignee'],
          date_range: ['2026-01-01T00:00:00Z', '2026-12-31T00:00:00+01:00'],
          filters: [{ dimension: 'project', op: 'in', values: ['docs', null] }],
          limit: 1,
          offset: 0,
        },
        200,
      ),
      ['get', '/api/v1/query/catalog', '/api/v1/query/catalog', { headers: cairn.auth }, 200],
      // The same Idempotency-Key for another request: a 422 problem, not a validation body.
      [
        'post',
        '/api/v1/tasks',
        '/api/v1/tasks',
        {
          headers: { ...cairn.auth, 'Idempotency-Key': 'openapi-test-1' },
          body: { business: 'oa', name: 'Something else' },
        },
        422,
      ],
      query({ metrics: [] }, 422),
      query({ metrics: ['tasks_created'], business: 'elsewhere' }, 404),
      ['post', '/api/v1/tasks', '/api/v1/tasks', { headers: cairn.auth, raw: '{"name":' }, 400],
      [
        'post',
        '/api/v1/tasks',
        '/api/v1/tasks',
        { headers: { ...cairn.auth, 'content-type': 'text/plain' }, raw: 'hello' },
        415,
      ],
      ['post', '/api/v1/tokens', '/api/v1/tokens', { headers: cairn.auth, body: {} }, 403],
      ['get', '/healthz', '/healthz', {}, 200],
      ['get', '/readyz', '/readyz', {}, 200],
    ];
    for (const [method, template, path, options, status] of calls) {
      const res = await http(cairn.url, method.toUpperCase(), path, {
        ...options,
        ...(options?.raw
          ? { headers: { 'content-type': 'application/json', ...options.headers } }
          : {}),
      });
      expect(res.status, `${method} ${path}`).toBe(status);
      expectDocumented(method, template, res);
    }
  });

  it('the live check has teeth: undocumented statuses and wrong shapes are refused', () => {
    const fake = (status: number, type: string, body: unknown) => ({
      status,
      headers: new Headers({ 'content-type': type, 'x-request-id': crypto.randomUUID() }),
      body,
      text: JSON.stringify(body),
    });
    const path = '/api/v1/tasks/{gid}';
    expect(() => expectDocumented('get', path, fake(404, 'application/problem+json', {}))).toThrow(
      /does not match/,
    );
    expect(() => expectDocumented('get', path, fake(418, 'application/json', {}))).toThrow(
      /not documented/,
    );
    expect(() =>
      expectDocumented('get', path, fake(422, 'application/json', { detail: [{ loc: 'x' }] })),
    ).toThrow(/does not match/);
    // A validation body labelled as a problem matches neither the problem nor, read as
    // `application/json` by a `+json`-aware validator, anything else: refused.
    const validation = { detail: [{ loc: ['body'], msg: 'x', type: 'missing' }] };
    expect(() =>
      expectDocumented('get', path, fake(422, 'application/problem+json', validation)),
    ).toThrow(/does not match/);
    expect(() =>
      expectDocumented(
        'post',
        '/api/v1/query',
        fake(200, 'application/json', { data: [{ colour: 1 }], metadata: {} }),
      ),
    ).toThrow(/does not match/);
  });

  it('token endpoints match too: 201 with the secret once, 204 with no body', async () => {
    const issued = await http(cairn.url, 'POST', '/api/v1/tokens', {
      headers: cairn.master,
      body: { name: 'ci', scopes: ['analytics:read'], businesses: ['oa'] },
    });
    expect(issued.status).toBe(201);
    expectDocumented('post', '/api/v1/tokens', issued);
    const revoked = await http(cairn.url, 'DELETE', `/api/v1/tokens/${issued.body.data.id}`, {
      headers: cairn.master,
    });
    expect(revoked.status).toBe(204);
    expectDocumented('delete', '/api/v1/tokens/{id}', revoked);
  });
});

/** JSON Schema 2020-12's keywords (every vocabulary) and the ones OpenAPI 3.1 adds. */
const SCHEMA_KEYWORDS = new Set([
  ...['$schema', '$id', '$ref', '$anchor', '$dynamicRef', '$dynamicAnchor', '$defs', '$comment'],
  ...['allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', 'dependentSchemas'],
  ...['prefixItems', 'items', 'contains', 'properties', 'patternProperties'],
  ...['additionalProperties', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties'],
  ...['type', 'enum', 'const', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum'],
  ...['exclusiveMinimum', 'maxLength', 'minLength', 'pattern', 'maxItems', 'minItems'],
  ...['uniqueItems', 'maxContains', 'minContains', 'maxProperties', 'minProperties'],
  ...['required', 'dependentRequired', 'format', 'contentEncoding', 'contentMediaType'],
  ...['contentSchema', 'title', 'description', 'default', 'deprecated', 'readOnly'],
  ...['writeOnly', 'examples'],
  ...['discriminator', 'xml', 'externalDocs', 'example'],
]);
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'dependentSchemas'];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SUBSCHEMAS = [
  ...['not', 'if', 'then', 'else', 'items', 'contains', 'additionalProperties'],
  ...['propertyNames', 'unevaluatedItems', 'unevaluatedProperties', 'contentSchema'],
];

/** Every keyword of `schema` and its subschemas that is not standard, with where it is. */
function nonStandardKeywords(schema: unknown, at: string, found: string[] = []): string[] {
  if (typeof schema !== 'object' || schema === null) return found;
  for (const [key, value] of Object.entries(schema)) {
    if (!SCHEMA_KEYWORDS.has(key)) found.push(`${at}/${key}`);
    if (SCHEMA_MAPS.includes(key)) {
      for (const [name, sub] of Object.entries(value as object)) {
        nonStandardKeywords(sub, `${at}/${key}/${name}`, found);
      }
    } else if (SCHEMA_LISTS.includes(key)) {
      for (const [i, sub] of (value as unknown[]).entries()) {
        nonStandardKeywords(sub, `${at}/${key}/${i}`, found);
      }
    } else if (SUBSCHEMAS.includes(key)) {
      nonStandardKeywords(value, `${at}/${key}`, found);
    }
  }
  return found;
}

/** The schemas of an OpenAPI document: components' and every `schema` member anywhere else. */
function schemasOf(node: unknown, at = '#', found: Array<[string, unknown]> = []) {
  if (typeof node !== 'object' || node === null) return found;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'schema') found.push([`${at}/schema`, value]);
    else if (at === '#/components' && key === 'schemas') {
      for (const [name, schema] of Object.entries(value as object)) {
        found.push([`${at}/schemas/${name}`, schema]);
      }
    } else schemasOf(value, `${at}/${key}`, found);
  }
  return found;
}

/** A place of request input and the schemas that apply to a value there (a branch's parents too). */
interface InputPlace {
  at: string;
  schemas: any[];
}

/**
 * Every string of request input (path and query parameters, bodies) that may hold free text:
 * no enum, const or date/uuid format. Items and members are reached through every schema that
 * applies at the parent, so a list's `items` beside its `anyOf` counts for the branch's items.
 */
function requestStrings(document: any): InputPlace[] {
  const found: InputPlace[] = [];
  const visit = (schemas: any[], at: string) => {
    const schema = schemas.at(-1);
    if (typeof schema !== 'object' || schema === null) return;
    const types = ([] as unknown[]).concat(schema.type);
    if (
      types.includes('string') &&
      schema.enum === undefined &&
      schema.const === undefined &&
      !['date', 'date-time', 'uuid'].includes(schema.format)
    ) {
      found.push({ at, schemas });
    }
    for (const key of ['allOf', 'anyOf']) {
      for (const [i, sub] of (schema[key] ?? []).entries())
        visit([...schemas, sub], `${at}/${key}/${i}`);
    }
    const inner = (pick: (s: any) => unknown) =>
      schemas.map(pick).filter((sub) => typeof sub === 'object' && sub !== null);
    if (schema.items)
      visit(
        inner((s) => s.items),
        `${at}/items`,
      );
    for (const name of Object.keys(schema.properties ?? {})) {
      visit(
        inner((s) => s.properties?.[name]),
        `${at}/properties/${name}`,
      );
    }
  };
  for (const [path, item] of Object.entries<any>(document.paths)) {
    for (const [method, operation] of Object.entries<any>(item)) {
      for (const [i, parameter] of (operation.parameters ?? []).entries()) {
        if (parameter.in === 'query' || parameter.in === 'path') {
          // A JSON-valued parameter states its value by `content`; its text holds that JSON.
          const json = parameter.content?.['application/json']?.schema;
          visit([json ?? parameter.schema], `${path} ${method} parameters/${i}`);
        }
      }
      const body = operation.requestBody?.content?.['application/json']?.schema;
      if (body) visit([body], `${path} ${method} body`);
    }
  }
  return found;
}

/** Whether a pattern that applies at the place refuses every text holding U+0000. */
const refusesNul = ({ schemas }: InputPlace) =>
  schemas.some((schema) =>
    [schema.pattern, ...(schema.allOf ?? []).map((part: any) => part.pattern)].some(
      (pattern) => typeof pattern === 'string' && !mayMatchNul(pattern),
    ),
  );

describe('the published schemas say what the service enforces', () => {
  let doc: any;
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  const cairn = useCairn({ businesses: ['oc'] });
  beforeAll(async () => {
    doc = (await http(cairn.url, 'GET', '/openapi.json')).body;
    ajv.addSchema(doc, 'doc');
  });
  /** Whether the document's schema at `pointer` (inside the document) takes `value`. */
  const accepts = (pointer: string, value: unknown): boolean =>
    ajv.validate({ $ref: `doc#${pointer}` }, value) as boolean;
  const pointerPart = (part: string) => part.replace(/~/g, '~0').replace(/\//g, '~1');
  const parameterAt = (path: string, method: string, name: string) => {
    const parameters = doc.paths[path][method].parameters as any[];
    const i = parameters.findIndex((parameter) => parameter.name === name);
    expect(i, `${method} ${path} ${name}`).toBeGreaterThanOrEqual(0);
    return `/paths/${pointerPart(path)}/${method}/parameters/${i}/schema`;
  };
  const bodyAt = (path: string, method: string) =>
    `/paths/${pointerPart(path)}/${method}/requestBody/content/application~1json/schema`;

  it('holds only JSON Schema 2020-12 and OpenAPI keywords', () => {
    const schemas = schemasOf(doc);
    expect(schemas.length).toBeGreaterThan(50);
    const found = schemas.flatMap(([at, schema]) => nonStandardKeywords(schema, at));
    expect(found).toEqual([]);
    // The walk has teeth.
    expect(nonStandardKeywords({ properties: { a: { formatMinimum: '1' } } }, '#')).toEqual([
      '#/properties/a/formatMinimum',
    ]);
    expect(JSON.stringify(doc)).not.toMatch(/formatM(in|ax)imum|x-enforced-in-code/);
  });

  /** Each value: what the document says, then what the service answers, must agree. */
  async function agree(
    label: string,
    pointer: string,
    cases: Array<[unknown, boolean]>,
    call: (value: any) => Promise<{ status: number; text: string }>,
    refusal = 422,
  ) {
    for (const [value, ok] of cases) {
      expect(accepts(pointer, value), `document on ${label}=${JSON.stringify(value)}`).toBe(ok);
      const res = await call(value);
      if (ok)
        expect(res.status, `${label}=${JSON.stringify(value)}: ${res.text}`).toBeLessThan(400);
      else expect(res.status, `${label}=${JSON.stringify(value)}: ${res.text}`).toBe(refusal);
    }
  }
  const list = (query: string) =>
    http(cairn.url, 'GET', `/api/v1/tasks?${query}`, { headers: cairn.auth });
  const query = (body: object) =>
    http(cairn.url, 'POST', '/api/v1/query', { headers: cairn.auth, body });

  it('due_on: dates from 1900 to 2299, as a pattern beside format: date', async () => {
    const at = `${bodyAt('/api/v1/tasks', 'post')}/properties/due_on`;
    expect(
      doc.paths['/api/v1/tasks'].post.requestBody.content['application/json'].schema.properties
        .due_on,
    ).toMatchObject({ format: 'date', pattern: '^(19[0-9][0-9]|2[0-2][0-9]{2})-' });
    await agree(
      'due_on',
      at,
      [
        ['1900-01-01', true],
        ['2299-12-31', true],
        [null, true],
        ['1899-12-31', false],
        ['2300-01-01', false],
        ['2026-02-30', false],
      ],
      (due_on) =>
        http(cairn.url, 'POST', '/api/v1/tasks', {
          headers: cairn.auth,
          body: { business: 'oc', name: 'due', due_on },
        }),
    );
    // The validator's own messages stay: the bounds in words.
    const early = await http(cairn.url, 'POST', '/api/v1/tasks', {
      headers: cairn.auth,
      body: { business: 'oc', name: 'due', due_on: '1899-12-31' },
    });
    expect(early.body.detail).toEqual([
      {
        loc: ['body', 'due_on'],
        msg: 'Input should be on or after 1900-01-01',
        type: 'greater_than_equal',
      },
    ]);
    await agree(
      'due_on[gte]',
      parameterAt('/api/v1/tasks', 'get', 'due_on[gte]'),
      [
        ['2026-01-01', true],
        ['1899-12-31', false],
        ['2300-01-01', false],
      ],
      (value) => list(`due_on[gte]=${value}`),
    );
  });

  it('opt_fields, status, project: the lists the parsers take', async () => {
    await agree(
      'opt_fields',
      parameterAt('/api/v1/tasks', 'get', 'opt_fields'),
      [
        ['status,due_on', true],
        [' status , due_on ', true],
        ['', true],
        ['bogus', false],
        ['status,', false],
        [' ', false],
      ],
      (value) => list(`opt_fields=${encodeURIComponent(value)}`),
    );
    await agree(
      'status',
      parameterAt('/api/v1/tasks', 'get', 'status'),
      [
        ['open,completed', true],
        ['open', true],
        [['open', 'cancelled'], true],
        ['open,bogus', false],
        ['', false],
        [['open', 'nope'], false],
        [Array(51).fill('open').join(','), false],
      ],
      (value) =>
        list(
          ([] as string[])
            .concat(value)
            .map((v) => `status=${encodeURIComponent(v)}`)
            .join('&'),
        ),
    );
    await agree(
      'project',
      parameterAt('/api/v1/tasks', 'get', 'project'),
      [
        ['alpha,null', true],
        [' alpha ', true],
        ['a'.repeat(200), true],
        ['a'.repeat(201), false],
        ['alpha,,beta', false],
        ['', false],
      ],
      (value) => list(`project=${encodeURIComponent(value)}`),
    );
    expect(accepts(parameterAt('/api/v1/tasks/{gid}/dependents', 'get', 'status'), 'bogus')).toBe(
      false,
    );
  });

  it('[gte]/[lt] instants: a date or an RFC 3339 date-time the service reads', async () => {
    const at = parameterAt('/api/v1/tasks', 'get', 'created_at[gte]');
    await agree(
      'created_at[gte]',
      at,
      [
        ['2026-01-01', true],
        ['2026-01-01T10:00:00Z', true],
        ['2026-01-01T10:00:00.123456789+14:00', true],
        ['2026-01-01T10:00:00+14:01', false],
        ['2026-01-01T23:59:60Z', false],
        ['0000-01-01', false],
        // The edge days: an offset that could carry the instant out of the years 1–9999.
        ['0001-01-01', true],
        ['0001-01-01T00:00:00Z', true],
        ['0001-01-01T05:00:00-03:00', true],
        ['0001-01-01T02:05:24.123+04:29', false],
        ['0001-01-01T23:00:00+00:01', false],
        ['0000-12-31T23:00:00-02:00', false],
        ['9999-12-31', true],
        ['9999-12-31T23:59:59.999+14:00', true],
        ['9999-12-31T20:00:00-05:00', false],
        ['9999-12-31T00:00:00-00:01', false],
        ['9999-12-30T23:00:00-14:00', true],
        ['2026-02-30', false],
        ['2026-01-01T10:00:00', false],
        ['yesterday', false],
      ],
      (value) => list(`created_at[gte]=${encodeURIComponent(value)}`),
    );
  });

  it('If-Match: the entity tags the service parses (a malformed one is a 400)', async () => {
    const created = await http(cairn.url, 'POST', '/api/v1/tasks', {
      headers: cairn.auth,
      body: { business: 'oc', name: 'tagged' },
    });
    const path = `/api/v1/tasks/${created.body.data.gid}`;
    const i = doc.paths['/api/v1/tasks/{gid}'].put.parameters.findIndex(
      (parameter: any) => parameter.$ref === '#/components/parameters/IfMatch',
    );
    expect(i).toBeGreaterThanOrEqual(0);
    await agree(
      'If-Match',
      '/components/parameters/IfMatch/schema',
      [
        ['*', true],
        [created.headers.get('etag'), true],
        ['"1", W/"2"', true],
        ['1', false],
        ['"a,b"', false],
        ['*, "1"', false],
      ],
      (value) =>
        http(cairn.url, 'PUT', path, {
          headers: { ...cairn.auth, 'If-Match': value },
          body: { name: 'retagged' },
        }).then((res) => (res.status === 412 ? { ...res, status: 200 } : res)),
      400,
    );
  });

  it('the query body: timezone, date_range, period xor date_range, and the parser’s rules', async () => {
    const at = bodyAt('/api/v1/query', 'post');
    const cases: Array<[object, boolean]> = [
      [{ timezone: 'Europe/Paris' }, true],
      [{ timezone: 'europe/PARIS' }, true],
      [{ timezone: 'Etc/GMT+5' }, true],
      [{ timezone: '+05:30' }, false],
      [{ timezone: 'Europe/Paris ' }, false],
      [{ date_range: ['2026-01-01', '2026-01-31'] }, true],
      [{ date_range: ['2026-01-01T00:00:00Z', '2026-02-01T00:00:00+01:00'] }, true],
      [{ date_range: ['1899-12-31', '1900-01-02'] }, false],
      [{ date_range: ['2026-01-01', '2026-01-02T00:00:00Z'] }, false],
      [{ date_range: ['2026-02-30', '2026-03-01'] }, false],
      [{ period: 'last_7_days', date_range: ['2026-01-01', '2026-01-31'] }, false],
      [{ dimensions: ['day', 'week'] }, false],
      [{ dimensions: ['day', 'project'] }, true],
      [{ filters: [{ dimension: 'project', op: 'eq', values: ['a', 'b'] }] }, false],
      [{ filters: [{ dimension: 'project', op: 'in', values: ['a', null] }] }, true],
      [{ filters: [{ dimension: 'business', op: 'in', values: [null] }] }, false],
      [{ period: 'all_time', compare: 'previous_year' }, false],
      [{ period: 'this_year', compare: 'previous_year' }, true],
      [{ date_range: ['2026-01-01T00:00:00+14:00', '2026-01-02T00:00:00Z'] }, true],
      [{ date_range: ['2026-01-01T00:00:00+15:00', '2026-01-02T00:00:00Z'] }, false],
      // order_by: requested fields only, each once.
      [{ order_by: [{ field: 'tasks_created', direction: 'desc' }] }, true],
      [{ dimensions: ['project'], order_by: [{ field: 'project' }] }, true],
      [{ order_by: [{ field: 'project' }] }, false],
      [{ order_by: [{ field: 'completion_rate' }] }, false],
      [{ order_by: [{ field: 'tasks_created' }, { field: 'tasks_created' }] }, false],
      [{ limit: 10_000 }, true],
      [{ limit: 10_001 }, false],
      [{ business: 'a\u0000' }, false],
    ];
    const bodies = cases.map(([extra, ok]): [object, boolean] => [
      { metrics: ['tasks_created'], ...extra },
      ok,
    ]);
    await agree('query', at, bodies, query);
    // The GET form: the same schema as its `q`, the same verdicts from the service.
    const q = `/paths/~1api~1v1~1query/get/parameters/0/content/application~1json/schema`;
    await agree('q', q, bodies, (body) =>
      http(cairn.url, 'GET', `/api/v1/query?q=${encodeURIComponent(JSON.stringify(body))}`, {
        headers: cairn.auth,
      }),
    );
    // The zones are named, so a name of the right shape that no engine knows is refused by both.
    expect(accepts(`${at}/properties/timezone`, 'Mars/Olympus_Mons')).toBe(false);
    expect(
      (await query({ metrics: ['tasks_created'], timezone: 'Mars/Olympus_Mons' })).status,
    ).toBe(422);
  });

  it('no input text may hold U+0000: every free-text string says so', async () => {
    const nul = 'a\u0000b';
    const pointers: Array<[string, unknown]> = [
      [`${bodyAt('/api/v1/tokens', 'post')}/properties/name`, nul],
      [`${bodyAt('/api/v1/tasks', 'post')}/properties/name`, nul],
      [`${bodyAt('/api/v1/tasks', 'post')}/properties/project`, nul],
      [`${bodyAt('/api/v1/tasks/{gid}', 'put')}/properties/business`, nul],
      [`${bodyAt('/api/v1/query', 'post')}/properties/filters/items/properties/values`, [nul]],
      [parameterAt('/api/v1/tasks', 'get', 'q'), `${nul}cd`],
      [parameterAt('/api/v1/tasks', 'get', 'business'), nul],
      [parameterAt('/api/v1/tasks', 'get', 'project'), nul],
      [parameterAt('/api/v1/tasks/{gid}/dependents', 'get', 'offset'), nul],
    ];
    for (const [pointer, value] of pointers) {
      expect(accepts(pointer, value), pointer).toBe(false);
      expect(
        accepts(pointer, JSON.parse(JSON.stringify(value).replace('\\u0000', '-'))),
        pointer,
      ).toBe(true);
    }
    // Every string of request input, wherever it sits: a walk over the whole document.
    const places = requestStrings(doc);
    expect(places.length).toBeGreaterThan(30);
    expect(places.filter((place) => !refusesNul(place)).map(({ at }) => at)).toEqual([]);
    await agree(
      'q',
      parameterAt('/api/v1/tasks', 'get', 'q'),
      [
        ['abc', true],
        [`${nul}cd`, false],
      ],
      (value) => list(`q=${encodeURIComponent(value)}`),
    );
  });

  it('the query limit is the instance’s CAIRN_QUERY_MAX_ROWS', () => {
    const limit = (document: any) =>
      document.paths['/api/v1/query'].post.requestBody.content['application/json'].schema.properties
        .limit;
    const inQ = (document: any) =>
      document.paths['/api/v1/query'].get.parameters[0].content['application/json'].schema
        .properties.limit;
    expect(limit(doc)).toMatchObject({ minimum: 1, maximum: 10_000 });
    expect(inQ(doc)).toEqual(limit(doc));
    const tight = buildOpenApi(queryRoutes({ maxRows: 250 } as never));
    expect(limit(tight)).toMatchObject({ minimum: 1, maximum: 250 });
    expect(inQ(tight)).toEqual(limit(tight));
  });

  it('PUT must change something: business alone is refused', async () => {
    const created = await http(cairn.url, 'POST', '/api/v1/tasks', {
      headers: cairn.auth,
      body: { business: 'oc', name: 'unchanged' },
    });
    await agree(
      'PUT body',
      bodyAt('/api/v1/tasks/{gid}', 'put'),
      [
        [{ business: 'oc' }, false],
        [{}, false],
        [{ business: 'oc', status: 'open' }, true],
      ],
      (body) =>
        http(cairn.url, 'PUT', `/api/v1/tasks/${created.body.data.gid}`, {
          headers: cairn.auth,
          body,
        }),
    );
  });
});

describe('patterns the document publishes, against the code they describe', () => {
  it('mayMatchNul: a pattern refuses U+0000 only when nothing in it can match it', () => {
    const cases: Array<[string, boolean]> = [
      ['^[A-Za-z0-9_.-]+$', false],
      ['^[^\\x00]*$', false],
      ['^(a|b\\.c)$', false],
      ['^[^,\\s\\x00]+$', false],
      ['^[^,]*$', true],
      ['^abc', true],
      ['abc$', true],
      ['^a|b$', true],
      ['^.*$', true],
      ['^\\S+$', true],
      ['^[\\x00-\\x1f]$', true],
      ['^a\\u0000$', true],
      ['^a\\$', true],
    ];
    for (const [pattern, may] of cases) {
      expect(mayMatchNul(pattern), pattern).toBe(may);
      // Where it says "cannot", the regex engine agrees on a text that matches but for a NUL.
      if (!may) expect(new RegExp(pattern, 'u').test('a\u0000')).toBe(false);
    }
  });

  it('digitRange matches exactly the numbers between its bounds', () => {
    for (const [low, high] of [
      ['0001', '9999'],
      ['1900', '2299'],
      ['0042', '0042'],
      ['0100', '0199'],
      ['0567', '8123'],
    ] as const) {
      const re = new RegExp(`^(${digitRange(low, high).join('|')})$`);
      for (let n = 0; n <= 9999; n++) {
        const text = String(n).padStart(4, '0');
        expect(re.test(text), `${text} in ${low}..${high}`).toBe(text >= low && text <= high);
      }
    }
  });

  it('If-Match: the pattern takes exactly what parseIfMatch takes', () => {
    const re = new RegExp(IF_MATCH_PATTERN, 'u');
    const pieces = [
      '"',
      '3',
      ',',
      ' ',
      '*',
      'W',
      '/',
      '\t',
      '\u00a0',
      'x',
      '\u00ff',
      '\u0100',
      '!',
      '\u007f',
    ];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (let i = 0; i < 20_000; i++) {
      let text = '';
      for (let n = next() % 9; n > 0; n--) text += pieces[next() % pieces.length];
      if (i % 3 === 0) text = ` "${text.replace(/"/g, '')}" , W/"1"`;
      let parsed = true;
      try {
        parseIfMatch(text);
      } catch {
        parsed = false;
      }
      expect(re.test(text), JSON.stringify(text)).toBe(parsed);
    }
  });

  it('timezone: every name Intl reads, in any case, fits the published shape', () => {
    const re = new RegExp(TIMEZONE_PATTERN, 'u');
    const names = [
      ...Intl.supportedValuesOf('timeZone'),
      'US/Pacific',
      'EST5EDT',
      'Etc/GMT-14',
      'utc',
      'W-SU',
    ];
    for (const name of names.flatMap((name) => [name, name.toLowerCase(), name.toUpperCase()])) {
      if (canonicalTimezone(name) !== null) expect(re.test(name), name).toBe(true);
    }
    for (const name of ['+05:30', 'GMT+05:30', ' UTC', 'Europe/Paris/', 'posix/Europe/Paris/x/y']) {
      expect(re.test(name) && canonicalTimezone(name) !== null, name).toBe(false);
    }
  });
});
