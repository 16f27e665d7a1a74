import { ValidationError } from '../../http/errors.ts';
import { defineRoute, type Route } from '../../http/route.ts';
import { queryContext } from '../caller-context.ts';
import type { AnalyticsDeps } from '../query.service.ts';
import {
  type ValuesParams,
  type ValuesQuery,
  valuesParams,
  valuesQuerySchema,
  valuesResponse,
  valuesZone,
} from './dimension-values.schemas.ts';
import { listDimensionValues } from './dimension-values.service.ts';

/** The zone `period` is read in, as /query reads it: an IANA name the engine can load too. */
function checkedZone(deps: AnalyticsDeps, timezone: unknown): string {
  if (timezone === undefined) return 'UTC';
  const zone = typeof timezone === 'string' ? valuesZone(timezone, deps.zones) : null;
  if (zone !== null) return zone;
  throw ValidationError.at(
    ['query', 'timezone'],
    `Unknown time zone '${String(timezone)}'; use an IANA name such as 'Europe/Paris'`,
    'timezone',
  );
}

/**
 * `GET /api/v1/businesses/{business}/dimensions/{dimension}/values`: the labels a dimension
 * takes in one business, most used first, for a type-ahead beside a query's filters.
 */
export function dimensionValuesRoute(deps: AnalyticsDeps): Route {
  return defineRoute<ValuesParams, ValuesQuery, unknown, { timezone: string }>({
    method: 'get',
    path: '/api/v1/businesses/:business/dimensions/:dimension/values',
    operationId: 'listDimensionValues',
    summary: "List a dimension's values in a business, most used first (for a type-ahead)",
    tags: ['analytics'],
    scope: 'analytics:read',
    params: valuesParams,
    query: valuesQuerySchema(deps.zones),
    checks: ({ query }) => ({ timezone: () => checkedZone(deps, query.timezone) }),
    successStatus: 200,
    response: valuesResponse,
    responses: { '429': 'QueryRefused', '503': 'QueryUnavailable' },
    async handle({ params, query, checked, ctx }) {
      const answer = await listDimensionValues(
        deps,
        {
          business: params.business,
          dimension: params.dimension,
          limit: query.limit,
          timezone: checked.timezone,
          ...(query.prefix === undefined ? {} : { prefix: query.prefix }),
          ...(query.period === undefined ? {} : { period: query.period }),
        },
        queryContext(ctx),
      );
      return { body: answer };
    },
  });
}
