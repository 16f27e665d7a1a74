import { responseMeta, single } from '../http/envelope.ts';
import { AppError, ValidationError } from '../http/errors.ts';
import { defineRoute, type Route } from '../http/route.ts';
import {
  addDependenciesBody,
  dependencyParams,
  type EdgeListQuery,
  edgeListQuery,
  edgeListResponse,
} from './dependency.schemas.ts';
import {
  addDependencies,
  type DependencyDeps,
  edgeCursorPosition,
  listEdges,
  listWalk,
  removeDependency,
  walkCursorPosition,
} from './dependency.service.ts';
import type { EdgeListing } from './keyset-cursor.ts';
import { type OptField, parseOptFields } from './opt-fields.ts';
import { gidParams, taskRecord } from './task.schemas.ts';
import { DependenciesRefused, UnknownDependencies, WalkTooLarge } from './task-errors.ts';
import { taskEtag } from './task-etag.ts';
import { parseStatuses } from './task-filters.ts';
import type { TaskStatus } from './task-status.ts';
import { toCompactTaskView, toTaskView } from './task-view.ts';

interface EdgeListChecked {
  optFields: OptField[];
  statuses: TaskStatus[] | undefined;
  /** The keyset position `offset` names: an edge id (0 first), or with depth=all a gid ('' first). */
  after: number | string;
}

/**
 * A refusal of listed dependencies placed in the body: each unknown one named by its first
 * place in the list beside the 404, each refused one a 422 issue at every place it is listed.
 */
function inDependencies(error: unknown, listed: readonly string[]): unknown {
  if (error instanceof UnknownDependencies) {
    return new AppError('not_found', error.detail, {
      errors: error.gids.map((gid) => ({
        field: `dependencies[${listed.indexOf(gid)}]`,
        code: 'not_found',
        message: `Task ${gid} does not exist.`,
      })),
    });
  }
  if (error instanceof DependenciesRefused) {
    return new ValidationError(
      listed.flatMap((gid, index) => {
        const msg = error.reasons.get(gid);
        return msg === undefined
          ? []
          : [{ loc: ['body', 'dependencies', index], msg, type: 'value_error' }];
      }),
    );
  }
  return error;
}

function edgeListRoute(deps: DependencyDeps, listing: EdgeListing): Route {
  return defineRoute<{ gid: string }, EdgeListQuery, unknown, EdgeListChecked>({
    method: 'get',
    path: `/api/v1/tasks/:gid/${listing}`,
    operationId: listing === 'dependents' ? 'listDependents' : 'listDependencies',
    summary:
      listing === 'dependents'
        ? 'List the tasks that depend on a task, directly or at any depth'
        : 'List the tasks a task depends on, directly or at any depth',
    tags: ['dependencies'],
    scope: 'workflows:read',
    params: gidParams,
    query: edgeListQuery,
    checks: ({ params, query }) => ({
      optFields: () => parseOptFields(query.opt_fields),
      statuses: () => parseStatuses('status', query.status),
      after: () => {
        const offset = typeof query.offset === 'string' ? query.offset : undefined;
        if (typeof params.gid !== 'string') return 0;
        return query.depth === 'all'
          ? walkCursorPosition(deps, listing, params.gid, offset)
          : edgeCursorPosition(deps, listing, params.gid, offset);
      },
    }),
    successStatus: 200,
    response: edgeListResponse,
    async handle({ params, query, checked, ctx }) {
      const columns = checked.optFields;
      const page =
        query.depth === 'all'
          ? await listWalk(
              deps,
              listing,
              params.gid,
              {
                limit: query.limit,
                afterGid: String(checked.after),
                columns,
                statuses: checked.statuses,
              },
              ctx.principal,
            ).catch((error: unknown) => {
              throw error instanceof WalkTooLarge
                ? ValidationError.at(['query', 'depth'], error.message, 'value_error')
                : error;
            })
          : await listEdges(
              deps,
              listing,
              params.gid,
              {
                limit: query.limit,
                afterId: Number(checked.after),
                columns,
                statuses: checked.statuses,
              },
              ctx.principal,
            );
      return {
        body: {
          data: page.rows.map((row) => {
            const view: Record<string, unknown> = toCompactTaskView(row, columns);
            if ('depth' in row) view.depth = row.depth;
            return view;
          }),
          meta: responseMeta(ctx.requestId),
          pagination: { limit: query.limit, has_more: page.hasMore, next_offset: page.nextOffset },
        },
      };
    },
  });
}

export function dependencyRoutes(deps: DependencyDeps): Route[] {
  return [
    defineRoute<{ gid: string }, unknown, { dependencies: string[] }>({
      method: 'post',
      path: '/api/v1/tasks/:gid/dependencies',
      operationId: 'addDependencies',
      summary: 'Make a task depend on other tasks of its business (all or nothing)',
      tags: ['dependencies'],
      scope: 'workflows:write',
      params: gidParams,
      body: addDependenciesBody,
      successStatus: 200,
      etag: 'issued',
      response: {
        type: 'object',
        properties: { data: taskRecord, meta: { $ref: '#/components/schemas/ResponseMeta' } },
        required: ['data', 'meta'],
      },
      write: true,
      async handle({ params, body, ctx, uow }) {
        const { task } = await addDependencies(
          uow.trx,
          params.gid,
          body.dependencies,
          ctx.principal,
          deps.now(),
        ).catch((error: unknown) => {
          throw inDependencies(error, body.dependencies);
        });
        uow.afterCommit(deps.wakeProjector);
        return { body: single(toTaskView(task), ctx.requestId), headers: { ETag: taskEtag(task) } };
      },
    }),
    defineRoute<{ gid: string; dependency_gid: string }, unknown, unknown>({
      method: 'delete',
      path: '/api/v1/tasks/:gid/dependencies/:dependency_gid',
      operationId: 'removeDependency',
      summary: 'Remove one dependency of a task',
      tags: ['dependencies'],
      scope: 'workflows:write',
      params: dependencyParams,
      successStatus: 204,
      write: true,
      async handle({ params, ctx, uow }) {
        await removeDependency(
          uow.trx,
          params.gid,
          params.dependency_gid,
          ctx.principal,
          deps.now(),
        );
        uow.afterCommit(deps.wakeProjector);
        return {};
      },
    }),
    edgeListRoute(deps, 'dependencies'),
    edgeListRoute(deps, 'dependents'),
  ];
}
