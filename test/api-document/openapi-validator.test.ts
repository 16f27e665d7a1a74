import { describe, expect, it } from 'vitest';
import type { HttpResult } from '../support/http-result.ts';
import { openApiValidator } from '../support/openapi-validator.ts';

// The validator every answer in the suite goes through: it must be able to say no.
const problem = { $ref: '#/components/schemas/Problem' };
const doc = {
  openapi: '3.1.0',
  info: { title: 'tiny', version: '1' },
  paths: {
    '/things/{id}': {
      get: {
        responses: {
          '200': {
            description: 'a thing',
            headers: { 'X-Count': { schema: { type: 'integer', minimum: 0 } } },
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: { id: { type: 'string' }, size: { type: 'integer' } },
                  required: ['id', 'size'],
                  additionalProperties: false,
                },
              },
            },
          },
          '404': { $ref: '#/components/responses/NotFound' },
          '422': {
            description: 'invalid, or a problem',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: { detail: { type: 'array' } },
                  required: ['detail'],
                },
              },
              'application/problem+json': { schema: problem },
            },
          },
        },
      },
    },
    '/things/mine': { get: { responses: { '204': { description: 'none' } } } },
  },
  components: {
    schemas: {
      Problem: {
        type: 'object',
        properties: { title: { type: 'string' }, status: { type: 'integer' } },
        required: ['title', 'status'],
      },
    },
    responses: {
      NotFound: {
        description: 'no such thing',
        content: { 'application/problem+json': { schema: problem } },
      },
    },
  },
};

const answer = (
  status: number,
  contentType: string | null,
  body?: unknown,
  headers: Record<string, string> = {},
): HttpResult => {
  const text = body === undefined ? '' : JSON.stringify(body);
  return {
    status,
    headers: new Headers({
      'x-request-id': '3f0e9c1e-5d7a-4b8e-9d55-0c9a3f1b2c4d',
      ...(contentType ? { 'content-type': contentType } : {}),
      ...headers,
    }),
    body,
    text,
  };
};

describe('the OpenAPI answer validator', () => {
  const { expectAnswerDocumented: check, templateOf } = openApiValidator(doc);
  const json = 'application/json; charset=utf-8';

  it('passes answers the document gives', () => {
    check('GET', '/things/a1?x=1', answer(200, json, { id: 'a1', size: 3 }, { 'X-Count': '2' }));
    check('HEAD', '/things/a1', answer(200, json));
    check(
      'GET',
      '/things/a1',
      answer(404, 'application/problem+json', { title: 'Not Found', status: 404 }),
    );
    check('GET', '/things/mine', answer(204, null));
    check(
      'GET',
      '/elsewhere',
      answer(404, 'application/problem+json', { title: 'Not Found', status: 404 }),
    );
    check('GET', '/docs/assets/abc/app.css', answer(200, 'text/css'));
  });

  it('matches a concrete path to its template, a literal segment first', () => {
    expect(templateOf('/things/a1')).toBe('/things/{id}');
    expect(templateOf('/things/mine')).toBe('/things/mine');
    expect(templateOf('/things/a1/more')).toBeUndefined();
  });

  it('throws on a status the operation does not document', () => {
    expect(() => check('GET', '/things/a1', answer(409, json, { id: 'a1', size: 1 }))).toThrow(
      /GET \/things\/a1 \(\/things\/\{id\}\) → 409: status 409 is not documented/,
    );
  });

  it('throws on a media type the status does not list', () => {
    expect(() => check('GET', '/things/a1', answer(200, 'text/plain', 'a1'))).toThrow(
      /→ 200: media type "text\/plain" is not documented/,
    );
    expect(() =>
      check('GET', '/things/a1', answer(404, json, { title: 'Not Found', status: 404 })),
    ).toThrow(/media type "application\/json" is not documented/);
  });

  it('throws on a body that breaks the schema', () => {
    expect(() => check('GET', '/things/a1', answer(200, json, { id: 'a1', size: '3' }))).toThrow(
      /→ 200 body does not match its application\/json schema: data\/size must be integer/,
    );
    expect(() => check('GET', '/things/mine', answer(204, json, { id: 'a1' }))).toThrow(
      /should have no body/,
    );
  });

  it('holds a +json answer to every entry a +json-aware validator could pick', () => {
    // A problem under application/problem+json is also read against application/json.
    expect(() =>
      check(
        'GET',
        '/things/a1',
        answer(422, 'application/problem+json', { title: 'x', status: 422 }),
      ),
    ).toThrow(/does not match its application\/json schema/);
  });

  it('throws on a malformed documented header and a missing X-Request-ID', () => {
    expect(() =>
      check('GET', '/things/a1', answer(200, json, { id: 'a1', size: 3 }, { 'X-Count': '-1' })),
    ).toThrow(/header X-Count=-1/);
    const bare = answer(204, null);
    bare.headers.delete('x-request-id');
    expect(() => check('GET', '/things/mine', bare)).toThrow(/X-Request-ID missing/);
  });

  it('throws on an unrouted answer that is not a problem of the expected kind', () => {
    expect(() => check('GET', '/elsewhere', answer(200, json, { ok: true }))).toThrow(
      /has no operation here, and 200 is not an answer for an unrouted request/,
    );
    expect(() =>
      check(
        'DELETE',
        '/things/a1',
        answer(405, json, { title: 'Method Not Allowed', status: 405 }),
      ),
    ).toThrow(/where application\/problem\+json was due/);
  });
});
