import { allowedBusinesses, requireBusiness } from '../auth/access.ts';
import { responseMeta, single } from '../http/envelope.ts';
import { ValidationError } from '../http/errors.ts';
import { defineRoute, type Route } from '../http/route.ts';
import type { JsonSchema } from '../http/validation.ts';
import { OPT_FIELDS_PARAMETER, type OptField, parseOptFields } from './opt-fields.ts';
import type { TaskRow } from './task.repository.ts';
import { createTaskBody, gidParams, taskRecord, updateTaskBody } from './task.schemas.ts';
import {
  type CreateTaskInput,
  createTask,
  deleteTask,
  getTask,
  type TaskDeps,
  type UpdateTaskInput,
  updateTask,
} from './task.service.ts';
import { listTasks } from './task-collection.repository.ts';
import {
  DEFAULT_TASK_LIST_MAX_DEPTH,
  reachablePages,
  type TaskCollectionQuery,
  type TaskFilters,
  taskCollectionQuery,
  taskFilterChecks,
} from './task-collection.schemas.ts';
import { UpdateRefused } from './task-errors.ts';
import { parseIfMatch, taskEtag } from './task-etag.ts';
import { toCompactTaskView, toTaskView } from './task-view.ts';

/** An update the domain refused, placed in the body: at the member refused, or the whole body. */
function inBody(error: unknown): never {
  if (error instanceof UpdateRefused) {
    const loc = error.member === undefined ? ['body'] : ['body', error.member];
    throw ValidationError.at(loc, error.message, 'value_error');
  }
  throw error;
}

/** The whole record, or with `opt_fields` the compact one plus the members named. */
const viewOf = (task: TaskRow, optFields: readonly OptField[]) =>
  optFields.length > 0 ? toCompactTaskView(task, optFields) : toTaskView(task);

const taskQuery: JsonSchema = {
  type: 'object',
  properties: { opt_fields: OPT_FIELDS_PARAMETER },
  additionalProperties: false,
};

const envelope = (data: object) => ({
  type: 'object',
  properties: { data, meta: { $ref: '#/components/schemas/ResponseMeta' } },
  required: ['data', 'meta'],
});

const pageEnvelope: JsonSchema = {
  type: 'object',
  properties: {
    data: { type: 'array', items: taskRecord },
    meta: {
      type: 'object',
      properties: {
        request_id: { type: 'string' },
        timestamp: { type: 'string', format: 'date-time' },
        total: {
          type: 'integer',
          description:
            'Tasks matching, counted up to the list depth bound: with total_is_lower_bound, more match.',
        },
        page: { type: 'integer' },
        per_page: { type: 'integer' },
        total_pages: {
          type: 'integer',
          description:
            'Pages that can be served: with total_is_lower_bound, those within the bound.',
        },
        total_is_lower_bound: {
          type: 'boolean',
          description:
            'More tasks match than the list depth bound; total is the bound. Narrow with filters to reach the rest.',
        },
      },
      required: ['request_id', 'total', 'page', 'per_page', 'total_pages', 'total_is_lower_bound'],
    },
  },
  required: ['data', 'meta'],
};

/** `maxListDepth`: how deep page-number lists go (CAIRN_TASK_LIST_MAX_DEPTH). */
export function taskRoutes(
  deps: TaskDeps,
  { maxListDepth = DEFAULT_TASK_LIST_MAX_DEPTH }: { maxListDepth?: number } = {},
): Route[] {
  return [
    defineRoute<unknown, unknown, CreateTaskInput>({
      method: 'post',
      path: '/api/v1/tasks',
      operationId: 'createTask',
      summary: 'Create a task',
      tags: ['tasks'],
      scope: 'workflows:write',
      body: createTaskBody,
      successStatus: 201,
      response: envelope(taskRecord),
      etag: 'issued',
      write: true,
      async handle({ body, ctx, uow }) {
        requireBusiness(ctx.principal, body.business);
        const task = await createTask(uow.trx, body, deps.now());
        uow.afterCommit(deps.wakeProjector);
        return {
          body: single(toTaskView(task), ctx.requestId),
          headers: { Location: `/api/v1/tasks/${task.gid}`, ETag: taskEtag(task) },
        };
      },
    }),
    defineRoute<unknown, TaskCollectionQuery, unknown, TaskFilters & { optFields: OptField[] }>({
      method: 'get',
      path: '/api/v1/tasks',
      operationId: 'listTasks',
      summary: 'List tasks, a page at a time',
      tags: ['tasks'],
      scope: 'workflows:read',
      query: taskCollectionQuery(maxListDepth),
      checks: ({ query }) => ({
        ...taskFilterChecks(query),
        optFields: () => parseOptFields(query.opt_fields),
      }),
      successStatus: 200,
      response: pageEnvelope,
      async handle({ query, checked, ctx }) {
        const page = await listTasks(
          deps.db,
          query,
          checked,
          allowedBusinesses(ctx.principal),
          maxListDepth,
        );
        return {
          body: {
            data: page.rows.map((row) => viewOf(row, checked.optFields)),
            meta: {
              ...responseMeta(ctx.requestId),
              total: page.total,
              page: query.page,
              per_page: query.per_page,
              total_pages: page.totalIsLowerBound
                ? reachablePages(query.per_page, maxListDepth)
                : Math.ceil(page.total / query.per_page),
              total_is_lower_bound: page.totalIsLowerBound,
            },
          },
        };
      },
    }),
    defineRoute<{ gid: string }, unknown, unknown, { optFields: OptField[] }>({
      method: 'get',
      path: '/api/v1/tasks/:gid',
      operationId: 'getTask',
      summary: 'Get a task',
      tags: ['tasks'],
      scope: 'workflows:read',
      params: gidParams,
      query: taskQuery,
      checks: ({ query }) => ({ optFields: () => parseOptFields(query.opt_fields) }),
      successStatus: 200,
      response: envelope(taskRecord),
      etag: 'read',
      async handle({ params, checked, ctx }) {
        const task = await getTask(deps.db, params.gid, ctx.principal);
        return {
          body: single(viewOf(task, checked.optFields), ctx.requestId),
          headers: { ETag: taskEtag(task) },
        };
      },
    }),
    defineRoute<{ gid: string }, unknown, UpdateTaskInput>({
      method: 'put',
      path: '/api/v1/tasks/:gid',
      operationId: 'updateTask',
      summary: 'Update the members sent of a task',
      tags: ['tasks'],
      scope: 'workflows:write',
      params: gidParams,
      body: updateTaskBody,
      successStatus: 200,
      response: envelope(taskRecord),
      etag: 'write',
      write: true,
      async handle({ params, body, ctx, uow }) {
        const ifMatch = parseIfMatch(ctx.headers['if-match']);
        const task = await updateTask(
          uow.trx,
          params.gid,
          body,
          ctx.principal,
          deps.now(),
          ifMatch,
        ).catch(inBody);
        uow.afterCommit(deps.wakeProjector);
        return { body: single(toTaskView(task), ctx.requestId), headers: { ETag: taskEtag(task) } };
      },
    }),
    defineRoute<{ gid: string }, unknown, unknown>({
      method: 'delete',
      path: '/api/v1/tasks/:gid',
      operationId: 'deleteTask',
      summary: 'Delete a task and its dependency edges',
      tags: ['tasks'],
      scope: 'workflows:write',
      params: gidParams,
      successStatus: 204,
      etag: 'write',
      write: true,
      async handle({ params, ctx, uow }) {
        const ifMatch = parseIfMatch(ctx.headers['if-match']);
        await deleteTask(uow.trx, params.gid, ctx.principal, deps.now(), ifMatch);
        uow.afterCommit(deps.wakeProjector);
        return {};
      },
    }),
  ];
}
