import { responseMeta } from '../../http/envelope.ts';
import { ValidationError } from '../../http/errors.ts';
import { defineRoute, type Route } from '../../http/route.ts';
import { gidParams } from '../task.schemas.ts';
import { GraphTooLarge } from '../task-errors.ts';
import {
  type BottlenecksQuery,
  bottlenecksParams,
  bottlenecksQuery,
  bottlenecksResponse,
  criticalPathResponse,
} from './graph-reads.schemas.ts';
import { bottlenecks, criticalPath, type GraphReadDeps } from './graph-reads.service.ts';

/** A graph too large for its bounded work, placed where the request named it. */
const placed = (loc: Array<string | number>) => (error: unknown) => {
  throw error instanceof GraphTooLarge
    ? ValidationError.at(loc, error.message, 'value_error')
    : error;
};

/**
 * Reads over the dependency graph in Postgres: they list tasks, so they need the scope that
 * reads tasks and dependents (`workflows:read`), as the `depth=all` listings do.
 */
export function graphReadRoutes(deps: GraphReadDeps): Route[] {
  return [
    defineRoute<{ gid: string }, unknown, unknown>({
      method: 'get',
      path: '/api/v1/tasks/:gid/critical_path',
      operationId: 'getCriticalPath',
      summary: 'The longest chain of open tasks a task waits on, nearest first',
      tags: ['dependencies'],
      scope: 'workflows:read',
      params: gidParams,
      successStatus: 200,
      response: criticalPathResponse,
      async handle({ params, ctx }) {
        const chain = await criticalPath(deps, params.gid, ctx.principal).catch(
          placed(['path', 'gid']),
        );
        return {
          body: { data: chain, meta: { ...responseMeta(ctx.requestId), length: chain.length } },
        };
      },
    }),
    defineRoute<{ business: string }, BottlenecksQuery, unknown>({
      method: 'get',
      path: '/api/v1/businesses/:business/bottlenecks',
      operationId: 'listBottlenecks',
      summary: 'The open tasks that hold up the most open work, at any depth',
      tags: ['dependencies'],
      scope: 'workflows:read',
      params: bottlenecksParams,
      query: bottlenecksQuery,
      successStatus: 200,
      response: bottlenecksResponse,
      async handle({ params, query, ctx }) {
        const ranked = await bottlenecks(
          deps,
          {
            business: params.business,
            limit: query.limit,
            ...(query.project === undefined ? {} : { project: query.project }),
          },
          ctx.principal,
        ).catch(placed(['path', 'business']));
        return { body: { data: ranked, meta: responseMeta(ctx.requestId) } };
      },
    }),
  ];
}
