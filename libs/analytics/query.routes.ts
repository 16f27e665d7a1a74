import { allowedBusinesses } from '../auth/principal.ts';
import { single } from '../http/envelope.ts';
import { ValidationError } from '../http/errors.ts';
import { defineRoute, type RequestContext, type Route } from '../http/route.ts';
import { answerEtag } from './answer-etag.ts';
import { queryCatalog } from './catalog-view.ts';
import { queryBodySchema } from './parse/query.schema.ts';
import type { QueryRequest } from './parse/query-parser.ts';
import { TooManyBucketsError } from './period/buckets.ts';
import { type AnalyticsDeps, type QueryResponse, runQuery } from './query.service.ts';
import { inUrl, queryInUrlSchema, readQ } from './query-in-url.ts';
import { catalogResponse, queryResponse } from './query-response.schema.ts';

/** `Cache-Control: no-cache` (or `no-store`) asks for an answer computed afresh. */
const bypassesCache = (header: string | undefined): boolean =>
  header !== undefined && /(^|,)\s*no-(cache|store)\s*(,|=|$)/i.test(header);

/**
 * A domain error of the query, placed in the request that caused it: only the route knows
 * request locations. Anything else passes through unchanged.
 */
function inRequest(error: unknown, body: QueryRequest): unknown {
  if (error instanceof TooManyBucketsError) {
    const at = body.dimensions?.indexOf(error.dimension) ?? -1;
    const loc = at >= 0 ? ['body', 'dimensions', at] : ['body', 'dimensions'];
    return ValidationError.at(loc, error.message, 'too_many_buckets');
  }
  return error;
}

/** Runs a checked query for the caller, its domain errors placed in the body. */
async function answer(
  deps: AnalyticsDeps,
  body: QueryRequest,
  ctx: RequestContext,
): Promise<QueryResponse> {
  const businesses = allowedBusinesses(ctx.principal);
  try {
    return await runQuery(deps, body, {
      signal: ctx.signal,
      businesses: businesses === null ? null : [...businesses],
      principal: ctx.principal.kind === 'token' ? `token:${ctx.principal.id}` : 'master',
      useCache: !bypassesCache(ctx.headers['cache-control']),
    });
  } catch (error) {
    throw inRequest(error, body);
  }
}

const RESPONSES = {
  '422': 'QueryUnprocessable',
  '429': 'QueryRefused',
  '503': 'QueryUnavailable',
} as const;

export function queryRoutes(deps: AnalyticsDeps): Route[] {
  // One schema object for both forms: compiled once, published alike.
  const querySchema = queryBodySchema(deps.maxRows);
  return [
    defineRoute<unknown, unknown, QueryRequest>({
      method: 'post',
      path: '/api/v1/query',
      operationId: 'runQuery',
      summary: 'Run an analytics query',
      tags: ['analytics'],
      scope: 'analytics:read',
      body: querySchema,
      successStatus: 200,
      response: queryResponse,
      responses: RESPONSES,
      async handle({ body, ctx }) {
        return { body: await answer(deps, body, ctx) };
      },
    }),
    // The same query in the URL, so an answer can be revalidated: its ETag in If-None-Match
    // gets a 304 while the answer, volatile metadata aside, is unchanged.
    defineRoute<unknown, { q: string }, unknown, { query: QueryRequest | undefined }>({
      method: 'get',
      path: '/api/v1/query',
      operationId: 'getQuery',
      summary: 'Run an analytics query given in the URL',
      tags: ['analytics'],
      scope: 'analytics:read',
      query: queryInUrlSchema(querySchema),
      checks: ({ query }) => ({ query: () => readQ(querySchema, query.q) }),
      successStatus: 200,
      response: queryResponse,
      responses: RESPONSES,
      etag: 'read',
      cacheControl: 'private, no-cache',
      async handle({ checked, ctx }) {
        // Checked before the handler runs: a request without a readable `q` never gets here.
        const body = checked.query as QueryRequest;
        const result = await answer(deps, body, ctx).catch((error: unknown) => {
          throw inUrl(error);
        });
        return { body: result, headers: { ETag: answerEtag(result) } };
      },
    }),
    defineRoute<unknown, unknown, unknown>({
      method: 'get',
      path: '/api/v1/query/catalog',
      operationId: 'getQueryCatalog',
      summary: 'List the metrics, dimensions and periods a query may name',
      tags: ['analytics'],
      scope: 'analytics:read',
      successStatus: 200,
      response: catalogResponse,
      async handle({ ctx }) {
        return { body: single(queryCatalog(), ctx.requestId) };
      },
    }),
  ];
}
