import { responseMeta, single } from '../platform/envelope.ts';
import { ValidationError } from '../platform/errors.ts';
import { defineRoute, type Route } from '../platform/route.ts';
import {
  addDependenciesBody,
  dependencyParams,
  type EdgeListQuery,
  edgeListQuery,
  edgeListResponse,
  OPT_FIELDS,
  type OptField,
} from './dependency.schemas.ts';
import {
  addDependencies,
  type DependenciesAdded,
  type DependencyDeps,
  edgeCursorPosition,
  listEdges,
  removeDependency,
} from './dependency.service.ts';
import type { EdgeListing } from './keyset-cursor.ts';
import { gidParams, taskRecord } from './task.schemas.ts';
import { toCompactTaskView, toTaskView } from './task-view.ts';

/** Asana style: `opt_fields=status,due_on`; an unknown name is refused, not ignored. */
function parseOptFields(raw: string | undefined): OptField[] {
  if (raw === undefined || raw === '') return [];
  const fields = raw.split(',').map((field) => field.trim());
  const unknown = fields.filter((field) => !(OPT_FIELDS as readonly string[]).includes(field));
  if (unknown.length > 0) {
    throw ValidationError.at(
      ['query', 'opt_fields'],
      `Unknown field ${unknown.map((f) => `'${f}'`).join(', ')}; allowed: ${OPT_FIELDS.join(', ')}`,
      'enum',
    );
  }
  return [...new Set(fields as OptField[])];
}

interface EdgeListChecked {
  optFields: OptField[];
  /** The keyset position `offset` names; 0 for the first page. */
  afterId: number;
}

function edgeListRoute(deps: DependencyDeps, listing: EdgeListing): Route {
  return defineRoute<{ gid: string }, EdgeListQuery, unknown, EdgeListChecked>({
    method: 'get',
    path: `/api/v1/tasks/:gid/${listing}`,
    operationId: listing === 'dependents' ? 'listDependents' : 'listDependencies',
    summary:
      listing === 'dependents'
        ? 'List the tasks that depend on a task, oldest edge first'
        : 'List the tasks a task depends on, oldest edge first',
    tags: ['dependencies'],
    scope: 'workflows:read',
    params: gidParams,
    query: edgeListQuery,
    checks: ({ params, query }) => ({
      optFields: () =>
        parseOptFields(typeof query.opt_fields === 'string' ? query.opt_fields : undefined),
      afterId: () =>
        typeof query.offset === 'string' && typeof params.gid === 'string'
          ? edgeCursorPosition(deps, listing, params.gid, query.offset)
          : 0,
    }),
    successStatus: 200,
    response: edgeListResponse,
    async handle({ params, query, checked, ctx }) {
      const page = await listEdges(
        deps,
        listing,
        params.gid,
        { limit: query.limit, afterId: checked.afterId, columns: checked.optFields },
        ctx.principal,
      );
      return {
        body: {
          data: page.rows.map((row) => toCompactTaskView(row, checked.optFields)),
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
      response: {
        type: 'object',
        properties: { data: taskRecord, meta: { $ref: '#/components/schemas/ResponseMeta' } },
        required: ['data', 'meta'],
      },
      async handle({ params, body, ctx }) {
        const respond = (result: DependenciesAdded) => ({
          body: single(toTaskView(result.task), ctx.requestId),
        });
        const beforeCommit = ctx.recordResponse(respond);
        return respond(
          await addDependencies(deps, params.gid, body.dependencies, ctx.principal, {
            beforeCommit,
          }),
        );
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
      async handle({ params, ctx }) {
        const respond = () => ({});
        await removeDependency(deps, params.gid, params.dependency_gid, ctx.principal, {
          beforeCommit: ctx.recordResponse(respond),
        });
        return respond();
      },
    }),
    edgeListRoute(deps, 'dependencies'),
    edgeListRoute(deps, 'dependents'),
  ];
}
