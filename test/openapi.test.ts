import SwaggerParser from '@apidevtools/swagger-parser';
import { beforeAll, describe, expect, it } from 'vitest';
import { toOpenApiPath } from '../libs/http/openapi.ts';
import { useCairn } from './support/cairn.ts';
import { http } from './support/http.ts';
import { openApiValidator } from './support/openapi-validator.ts';

const METHODS = ['get', 'post', 'put', 'delete', 'patch'];

describe('GET /openapi.json', () => {
  let doc: any;
  let expectDocumented: ReturnType<typeof openApiValidator>;
  const cairn = useCairn({
    env: { CAIRN_MASTER_KEY: 'openapi-master-key-0123456789abcd' },
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
