import { defineRoute, type Route } from '../../http/route.ts';
import { queryContext } from '../caller-context.ts';
import type { AnalyticsDeps } from '../query.service.ts';
import { type ForecastRequest, forecastBody, forecastResponse } from './forecast.schemas.ts';
import { forecastCompletion } from './forecast.service.ts';

/**
 * `POST /api/v1/forecast`: when the open work of a business (or a filtered part of it) will be
 * done, from its daily throughput. It reads analytics facts, so it takes `analytics:read`, as
 * `/query` does; it writes nothing, so a retry is harmless.
 */
export function forecastRoute(deps: AnalyticsDeps): Route {
  return defineRoute<unknown, unknown, ForecastRequest>({
    method: 'post',
    path: '/api/v1/forecast',
    operationId: 'forecastCompletion',
    summary: 'Forecast when the open tasks will be done (Monte Carlo over daily throughput)',
    tags: ['analytics'],
    scope: 'analytics:read',
    body: forecastBody(deps.zones),
    successStatus: 200,
    response: forecastResponse,
    responses: { '429': 'QueryRefused', '503': 'QueryUnavailable' },
    async handle({ body, ctx }) {
      return { body: await forecastCompletion(deps, body, queryContext(ctx)) };
    },
  });
}
