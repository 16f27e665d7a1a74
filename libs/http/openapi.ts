import fs from 'node:fs';
import {
  COMMON_RESPONSE_HEADERS,
  COMPONENTS,
  parameterRef,
  type ResponseName,
  responseRef,
} from './openapi-components.ts';
import { toOpenApiSchema, toParameterSchema, toRequestSchema } from './openapi-dialect.ts';
import { PLATFORM_PATHS } from './openapi-platform.ts';
import type { Route } from './route.ts';
import type { JsonSchema } from './validation.ts';

export { toOpenApiSchema };

export type OpenApiDocument = Record<string, unknown> & {
  paths: Record<string, Record<string, Record<string, unknown>>>;
};

const VERSION = (
  JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

const DESCRIPTION = `Analytics queries from ClickHouse and a task dependency graph in Postgres.

Authenticate with \`Authorization: Bearer <token>\`. Invalid input is \`422 application/json\`
\`{detail:[{loc,msg,type}]}\`; every other error is RFC 9457 \`application/problem+json\`.
No input text may hold U+0000 or an unpaired UTF-16 surrogate (\`string_nul\`, \`string_unicode\`); in a batch, that item's 422.
Every response carries \`X-Request-ID\` and \`X-RateLimit-*\`; POST and PUT accept \`Idempotency-Key\`.`;

const TAG_DESCRIPTIONS: Record<string, string> = {
  tokens: 'API tokens: issue and revoke with the master key, read your own.',
  tasks: 'Tasks: the write side; each write appends facts for the analytics side.',
  dependencies: 'The task dependency graph: edges, dependents and dependencies.',
  analytics: 'Analytics queries over the projected facts, and their catalog.',
  views:
    'Saved queries (`analytics:write` to save, `analytics:read` to read and answer), and the embed tokens that show one outside the API.',
  embeds:
    "What an embed token opens, with no other credential: its view's chart page and answer, locked filters applied.",
  platform: 'Probes, metrics and this document; public.',
};

/** Express `/tasks/:gid` → OpenAPI `/tasks/{gid}`. */
export function toOpenApiPath(template: string): string {
  return template.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/**
 * The OpenAPI 3.1 description of `routes`, built from the very schemas the router validates
 * with, so the document cannot drift from the behaviour. Called with the app's route table.
 */
export function buildOpenApi(routes: readonly Route[]): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = structuredClone(PLATFORM_PATHS);
  for (const route of routes) {
    const path = toOpenApiPath(route.path);
    paths[path] ??= {};
    paths[path][route.method] = operation(route);
  }
  const tags = [...new Set(routes.flatMap((route) => route.tags)), 'platform'];
  return {
    openapi: '3.1.0',
    info: { title: 'Cairn API', version: VERSION, description: DESCRIPTION },
    servers: [{ url: '/' }],
    tags: tags.map((name) => ({
      name,
      ...(TAG_DESCRIPTIONS[name] ? { description: TAG_DESCRIPTIONS[name] } : {}),
    })),
    paths,
    components: COMPONENTS,
  };
}

function operation(route: Route): Record<string, unknown> {
  const writes = route.method === 'post' || route.method === 'put';
  const parameters: unknown[] = [
    ...pathParameters(route),
    ...objectParameters(route.query, 'query'),
    parameterRef('RequestId'),
    ...(writes ? [parameterRef('IdempotencyKey')] : []),
    ...(route.etag === 'write' ? [parameterRef('IfMatch')] : []),
    ...(route.etag === 'read' ? [parameterRef('IfNoneMatch')] : []),
  ];
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: route.tags,
    ...description(route),
    security: security(route.scope),
    parameters,
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: toRequestSchema(route.body) } },
          },
        }
      : {}),
    responses: responses(route, writes),
  };
}

function description(route: Route): { description?: string } {
  const parts = [
    ...(route.scope ? [scopeDescription(route.scope)] : []),
    // OpenAPI lets a service ignore parameters it does not list; this one refuses them here.
    ...(route.query?.additionalProperties === false
      ? ['A query parameter not listed here is refused (422 `extra_forbidden`).']
      : []),
  ];
  return parts.length > 0 ? { description: parts.join(' ') } : {};
}

function scopeDescription(scope: NonNullable<Route['scope']>): string {
  if (scope === 'master') return 'Needs the master key.';
  if (scope === 'token') return 'Needs an API token, whatever its scopes (not the master key).';
  if (scope === 'reader')
    return 'Needs a token with the `analytics:read` scope, or the master key.';
  return `Needs a token with the \`${scope}\` scope.`;
}

function security(scope: Route['scope']): Array<Record<string, string[]>> {
  if (scope === null) return [];
  if (scope === 'master') return [{ masterKey: [] }];
  if (scope === 'token') return [{ bearerAuth: [] }];
  if (scope === 'reader') return [{ bearerAuth: ['analytics:read'] }, { masterKey: [] }];
  // OpenAPI 3.1 lets non-OAuth requirements list role names: here, the scope needed.
  return [{ bearerAuth: [scope] }];
}

function responses(route: Route, writes: boolean): Record<string, unknown> {
  const successHeaders = {
    ...COMMON_RESPONSE_HEADERS,
    ...(writes
      ? { 'Idempotent-Replayed': { $ref: '#/components/headers/Idempotent-Replayed' } }
      : {}),
    ...(route.etag && route.successStatus !== 204
      ? { ETag: { $ref: '#/components/headers/ETag' } }
      : {}),
    ...cacheControl(route),
  };
  const success =
    route.successStatus === 204
      ? { description: 'Done; no content.', headers: successHeaders }
      : {
          description: route.summary,
          headers: { ...successHeaders, ...route.successHeaders },
          content: route.files
            ? Object.fromEntries(
                Object.entries(route.files).map(([type, schema]) => [
                  type,
                  { schema: toOpenApiSchema(schema) },
                ]),
              )
            : {
                'application/json': {
                  schema: route.response ? toOpenApiSchema(route.response) : {},
                },
              },
        };
  const failures: Array<[string, ResponseName, boolean]> = [
    ['400', 'BadRequest', route.body !== undefined || writes || route.path.includes(':')],
    ['401', 'Unauthorized', route.scope !== null],
    ['403', 'Forbidden', route.scope !== null],
    ['404', 'NotFound', true],
    ['304', 'NotModified', route.etag === 'read'],
    ['409', 'Conflict', writes],
    ['412', 'PreconditionFailed', route.etag === 'write'],
    ['413', 'PayloadTooLarge', route.body !== undefined],
    ['415', 'UnsupportedMediaType', route.body !== undefined],
    ['422', 'ValidationFailed', writes || Boolean(route.params || route.query || route.body)],
    ['429', 'RateLimited', true],
    ['431', 'HeadersTooLarge', true],
    ['500', 'InternalError', true],
    // Every operation reads Postgres (its token, at least): unreachable, or out of time.
    ['503', 'Unavailable', true],
    ['504', 'GatewayTimeout', true],
  ];
  const result: Record<string, unknown> = { [String(route.successStatus)]: success };
  for (const [status, name, applies] of failures) if (applies) result[status] = responseRef(name);
  if (route.etag === 'read' && route.cacheControl) {
    // The shared 304 with the header the router adds to this route's.
    const { description, headers } = COMPONENTS.responses.NotModified;
    result['304'] = { description, headers: { ...headers, ...cacheControl(route) } };
  }
  for (const [status, name] of Object.entries(route.responses ?? {})) {
    result[status] = responseRef(name);
  }
  return result;
}

function cacheControl(route: Route): Record<string, unknown> {
  if (!route.cacheControl) return {};
  return {
    'Cache-Control': {
      description:
        'How a cache may keep this answer: `private, no-cache` lets a browser keep it, but only to revalidate it first with `If-None-Match` (a 304 while it holds).',
      schema: { type: 'string', const: route.cacheControl },
    },
  };
}

function pathParameters(route: Route): unknown[] {
  const declared = (route.params?.properties ?? {}) as Record<string, JsonSchema>;
  return [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map(([, name = '']) => ({
    name,
    in: 'path',
    required: true,
    schema: toParameterSchema(declared[name] ?? { type: 'string' }),
  }));
}

function objectParameters(schema: JsonSchema | undefined, location: 'query'): unknown[] {
  if (!schema) return [];
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: location,
    required: required.has(name),
    ...(typeof property.description === 'string' ? { description: property.description } : {}),
    ...(isJsonText(property)
      ? // OpenAPI 3.1 says "a JSON value" by the parameter's `content`, not its `schema`.
        { content: { 'application/json': { schema: toRequestSchema(property.contentSchema) } } }
      : {
          // `created_at[gte]=…` style filters arrive as nested objects when declared as one.
          ...(property.type === 'object' ? { style: 'deepObject', explode: true } : {}),
          schema: toParameterSchema(property),
        }),
  }));
}

/** A text parameter holding JSON of `contentSchema` (see analytics/query-in-url.ts). */
function isJsonText(property: JsonSchema): property is JsonSchema & { contentSchema: JsonSchema } {
  return (
    property.contentMediaType === 'application/json' &&
    typeof property.contentSchema === 'object' &&
    property.contentSchema !== null
  );
}
