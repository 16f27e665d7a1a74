import { allowedBusinesses, mayAccessBusiness } from '../auth/principal.ts';
import { responseMeta, single } from '../platform/envelope.ts';
import { AppError } from '../platform/errors.ts';
import { defineRoute, type Route } from '../platform/route.ts';
import type { JsonSchema } from '../platform/validation.ts';
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
import { listTasks } from './task-collection.query.ts';
import { type TaskCollectionQuery, taskCollectionQuery } from './task-collection.schema.ts';
import { toTaskView } from './task-view.ts';

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
        total: { type: 'integer' },
        page: { type: 'integer' },
        per_page: { type: 'integer' },
        total_pages: { type: 'integer' },
      },
      required: ['request_id', 'total', 'page', 'per_page', 'total_pages'],
    },
  },
  required: ['data', 'meta'],
};

export function taskRoutes(deps: TaskDeps): Route[] {
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
      async handle({ body, ctx }) {
        if (!mayAccessBusiness(ctx.principal, body.business)) {
          throw new AppError('not_found', `Business ${body.business} does not exist.`);
        }
        const respond = (task: TaskRow) => ({
          body: single(toTaskView(task), ctx.requestId),
          headers: { Location: `/api/v1/tasks/${task.gid}` },
        });
        const beforeCommit = ctx.recordResponse(respond);
        return respond(await createTask(deps, body, { beforeCommit }));
      },
    }),
    defineRoute<unknown, TaskCollectionQuery, unknown>({
      method: 'get',
      path: '/api/v1/tasks',
      operationId: 'listTasks',
      summary: 'List tasks, a page at a time',
      tags: ['tasks'],
      scope: 'workflows:read',
      query: taskCollectionQuery,
      successStatus: 200,
      response: pageEnvelope,
      async handle({ query, ctx }) {
        const page = await listTasks(deps.db, query, allowedBusinesses(ctx.principal));
        return {
          body: {
            data: page.rows.map(toTaskView),
            meta: {
              ...responseMeta(ctx.requestId),
              total: page.total,
              page: query.page,
              per_page: query.per_page,
              total_pages: Math.ceil(page.total / query.per_page),
            },
          },
        };
      },
    }),
    defineRoute<{ gid: string }, unknown, unknown>({
      method: 'get',
      path: '/api/v1/tasks/:gid',
      operationId: 'getTask',
      summary: 'Get a task',
      tags: ['tasks'],
      scope: 'workflows:read',
      params: gidParams,
      successStatus: 200,
      response: envelope(taskRecord),
      async handle({ params, ctx }) {
        const task = await getTask(deps, params.gid, ctx.principal);
        return { body: single(toTaskView(task), ctx.requestId) };
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
      async handle({ params, body, ctx }) {
        const respond = (task: TaskRow) => ({ body: single(toTaskView(task), ctx.requestId) });
        const beforeCommit = ctx.recordResponse(respond);
        return respond(await updateTask(deps, params.gid, body, ctx.principal, { beforeCommit }));
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
      async handle({ params, ctx }) {
        const respond = () => ({});
        await deleteTask(deps, params.gid, ctx.principal, {
          beforeCommit: ctx.recordResponse(respond),
        });
        return respond();
      },
    }),
  ];
}
