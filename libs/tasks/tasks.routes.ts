import { mayAccessBusiness } from '../auth/principal.ts';
import { single } from '../platform/envelope.ts';
import { AppError } from '../platform/errors.ts';
import { defineRoute, type Route } from '../platform/route.ts';
import { createTaskBody, gidParams, taskRecord } from './task.schemas.ts';
import { type CreateTaskInput, createTask, getTask, type TaskDeps } from './task.service.ts';
import { toTaskView } from './task-view.ts';

const envelope = (data: object) => ({
  type: 'object',
  properties: { data, meta: { $ref: '#/components/schemas/ResponseMeta' } },
  required: ['data', 'meta'],
});

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
        const task = await createTask(deps, body);
        return {
          body: single(toTaskView(task), ctx.requestId),
          headers: { Location: `/api/v1/tasks/${task.gid}` },
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
  ];
}
