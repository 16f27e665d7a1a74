import { allowedBusinesses, mayAccessBusiness } from '../auth/principal.ts';
import { AppError } from '../platform/errors.ts';
import { defineRoute, type Route } from '../platform/route.ts';
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
        if (body.business !== undefined && !mayAccessBusiness(ctx.principal, body.business)) {
          throw new AppError('not_found', `Business ${body.business} does not exist.`);
        }
        const businesses = allowedBusinesses(ctx.principal);
        return {
          body: await runQuery(deps, body, {
            signal: ctx.signal,
            businesses: businesses === null ? null : [...businesses],
          }),
        };
      },
    }),
  ];
}
