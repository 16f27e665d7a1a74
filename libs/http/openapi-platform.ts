import { COMMON_RESPONSE_HEADERS, responseRef } from './openapi-components.ts';

/**
 * The operations app.ts serves itself rather than through the route table: probes, metrics and
 * the API description. Public, so `security: []`.
 */
const platform = (summary: string, operationId: string, ok: object, extra: object = {}) => ({
  get: {
    operationId,
    summary,
    description: `${summary}. Public: no token needed.`,
    tags: ['platform'],
    security: [],
    parameters: [{ $ref: '#/components/parameters/RequestId' }],
    responses: {
      '200': { description: summary, headers: COMMON_RESPONSE_HEADERS, ...ok },
      ...extra,
      '429': responseRef('RateLimited'),
      '431': responseRef('HeadersTooLarge'),
      '500': responseRef('InternalError'),
    },
  },
});

const json = (schema: object) => ({ content: { 'application/json': { schema } } });

export const PLATFORM_PATHS: Record<string, Record<string, Record<string, unknown>>> = {
  '/': {
    get: {
      operationId: 'getRoot',
      summary: 'Where a person lands: a redirect to the explorer',
      description:
        'Where a person lands: a redirect (302) to the explorer at `/explore`. Public: no token needed.',
      tags: ['platform'],
      security: [],
      parameters: [{ $ref: '#/components/parameters/RequestId' }],
      responses: {
        '302': {
          description: 'The explorer is at `/explore`',
          headers: {
            ...COMMON_RESPONSE_HEADERS,
            Location: {
              description: 'The explorer',
              schema: { type: 'string', const: '/explore' },
            },
          },
        },
        '429': responseRef('RateLimited'),
        '431': responseRef('HeadersTooLarge'),
        '500': responseRef('InternalError'),
      },
    },
  },
  '/healthz': platform(
    'Liveness: the process answers',
    'getHealth',
    json({
      type: 'object',
      properties: { status: { const: 'ok' }, request_id: { type: 'string' } },
      required: ['status'],
    }),
  ),
  '/readyz': platform(
    'Readiness: every engine answers',
    'getReadiness',
    json({
      type: 'object',
      properties: {
        status: { const: 'ready' },
        checks: { type: 'object', additionalProperties: { type: 'string', enum: ['ok'] } },
        request_id: { type: 'string' },
      },
      required: ['status', 'checks'],
    }),
    { '503': responseRef('Unavailable') },
  ),
  '/metrics': platform('Prometheus metrics', 'getMetrics', {
    content: { 'text/plain': { schema: { type: 'string' } } },
  }),
  '/openapi.json': platform(
    'This OpenAPI 3.1 document',
    'getOpenApi',
    json({
      type: 'object',
      properties: {
        openapi: { type: 'string', const: '3.1.0' },
        // Open objects said so: generated clients type an object without members as empty.
        info: {
          type: 'object',
          properties: { title: { type: 'string' }, version: { type: 'string' } },
          required: ['title', 'version'],
          additionalProperties: true,
        },
        paths: { type: 'object', additionalProperties: true },
        components: { type: 'object', additionalProperties: true },
      },
      required: ['openapi', 'info', 'paths'],
    }),
  ),
  '/docs': platform('Interactive API reference (Swagger UI)', 'getDocs', {
    content: { 'text/html': { schema: { type: 'string' } } },
  }),
  '/explore': platform(
    'The explorer: query, chart and browse dependents in a browser',
    'getExplorer',
    {
      content: { 'text/html': { schema: { type: 'string' } } },
    },
  ),
};
