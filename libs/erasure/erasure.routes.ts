import { responseMeta } from '../http/envelope.ts';
import { AppError } from '../http/errors.ts';
import { defineRoute, type Route } from '../http/route.ts';
import { findErasure } from './erasure.repository.ts';
import { businessParams, erasureResponse } from './erasure.schemas.ts';
import { type ErasureDeps, startErasure } from './erasure.service.ts';
import { erasureLocation, toErasureView } from './erasure-view.ts';

const locationHeader = {
  Location: {
    description: 'The erasure’s status resource (`GET` it with the master key).',
    schema: { type: 'string' },
  },
};

export function erasureRoutes(deps: {
  erasure: Pick<ErasureDeps, 'db' | 'clickhouse' | 'now'>;
  /** Carries the started erasure on in the background. */
  run: (business: string) => void;
}): Route[] {
  const { db } = deps.erasure;
  const notFound = (business: string) =>
    new AppError('not_found', `Business ${business} has no data and no erasure.`);
  return [
    defineRoute<{ business: string }, unknown, unknown>({
      method: 'delete',
      path: '/api/v1/businesses/:business',
      operationId: 'eraseBusiness',
      summary:
        'Erase a business: its tasks, dependencies, facts, rollup rows, cached answers and idempotency records, and its place in every token (a token left with none is revoked). Runs in the background; repeating it is harmless',
      tags: ['businesses'],
      scope: 'master',
      params: businessParams,
      successStatus: 202,
      response: erasureResponse,
      successHeaders: locationHeader,
      async handle({ params, ctx }) {
        const { business } = params;
        if ((await startErasure(deps.erasure, business)) === 'not_found') {
          throw notFound(business);
        }
        deps.run(business);
        const row = await findErasure(db, business);
        if (!row) throw notFound(business);
        return {
          status: 202,
          headers: { Location: erasureLocation(business) },
          body: { data: toErasureView(row), meta: responseMeta(ctx.requestId) },
        };
      },
    }),
    defineRoute<{ business: string }, unknown, unknown>({
      method: 'get',
      path: '/api/v1/businesses/:business/erasure',
      operationId: 'getBusinessErasure',
      summary: 'How far the erasure of a business has come (master key only)',
      tags: ['businesses'],
      scope: 'master',
      params: businessParams,
      successStatus: 200,
      response: erasureResponse,
      async handle({ params, ctx }) {
        const row = await findErasure(db, params.business);
        if (!row) throw notFound(params.business);
        return { body: { data: toErasureView(row), meta: responseMeta(ctx.requestId) } };
      },
    }),
  ];
}
