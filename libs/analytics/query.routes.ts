import { allowedBusinesses } from '../auth/principal.ts';
import { single } from '../http/envelope.ts';
import { ValidationError } from '../http/errors.ts';
import { defineRoute, type Route } from '../http/route.ts';
import { queryCatalog } from './catalog-view.ts';
import { queryBodySchema } from './parse/query.schema.ts';
import type { QueryRequest } from './parse/query-parser.ts';
import { TooManyBucketsError } from './period/buckets.ts';
import { type AnalyticsDeps, runQuery } from './query.service.ts';
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

export function queryRoutes(deps: AnalyticsDeps): Route[] {
  return [
    defineRoute<unknown, unknown, QueryRequest>({
      method: 'post',
      path: '/api/v1/query',
      operationId: 'runQuery',
      summary: 'Run an analytics query',
      tags: ['analytics'],
      scope: 'analytics:read',
      body: queryBodySchema(deps.maxRows),
      successStatus: 200,
      response: queryResponse,
      responses: { '422': 'QueryUnprocessable', '429': 'QueryRefused', '503': 'QueryUnavailable' },
      async handle({ body, ctx }) {
        const businesses = allowedBusinesses(ctx.principal);
        const answer = runQuery(deps, body, {
          signal: ctx.signal,
          businesses: businesses === null ? null : [...businesses],
          principal: ctx.principal.kind === 'token' ? `token:${ctx.principal.id}` : 'master',
          useCache: !bypassesCache(ctx.headers['cache-control']),
        });
        return {
          body: await answer.catch((error: unknown) => {
            throw inRequest(error, body);
          }),
        };
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
