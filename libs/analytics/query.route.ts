import { allowedBusinesses } from '../auth/principal.ts';
import { single } from '../platform/envelope.ts';
import { defineRoute, type Route } from '../platform/route.ts';
import { queryCatalog } from './catalog-view.ts';
import { queryBody } from './query.schema.ts';
import { type AnalyticsDeps, runQuery } from './query.service.ts';
import type { QueryRequest } from './query-parser.ts';

export function queryRoutes(deps: AnalyticsDeps): Route[] {
  return [
    defineRoute<unknown, unknown, QueryRequest>({
      method: 'post',
      path: '/api/v1/query',
      operationId: 'runQuery',
      summary: 'Run an analytics query',
      tags: ['analytics'],
      scope: 'analytics:read',
      body: queryBody,
      successStatus: 200,
      async handle({ body, ctx }) {
        const businesses = allowedBusinesses(ctx.principal);
        return {
          body: await runQuery(deps, body, {
            signal: ctx.signal,
            businesses: businesses === null ? null : [...businesses],
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
      async handle({ ctx }) {
        return { body: single(queryCatalog(), ctx.requestId) };
      },
    }),
  ];
}
