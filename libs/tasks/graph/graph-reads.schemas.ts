import { businessName } from '../../auth/business-name.ts';
import type { JsonSchema } from '../../http/validation.ts';
import { TASK_STATUSES } from '../task-status.ts';

export const DEFAULT_BOTTLENECKS = 20;
export const MAX_BOTTLENECKS = 100;

export interface BottlenecksQuery {
  project?: string;
  limit: number;
}

export const bottlenecksParams: JsonSchema = {
  type: 'object',
  properties: { business: { ...businessName, description: 'A business the token is bound to.' } },
  required: ['business'],
  additionalProperties: false,
};

export const bottlenecksQuery: JsonSchema = {
  type: 'object',
  properties: {
    project: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description:
        'Rank only this project’s tasks; the tasks waiting on them are counted in every project.',
    },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_BOTTLENECKS,
      default: DEFAULT_BOTTLENECKS,
      description: 'How many tasks at most, the most blocking first.',
    },
  },
  additionalProperties: false,
};

const taskOnGraphProperties = {
  gid: { type: 'string' },
  resource_type: { type: 'string', const: 'task' },
  name: { type: 'string' },
  status: { type: 'string', enum: TASK_STATUSES },
  due_on: { type: ['string', 'null'], format: 'date' },
  overdue: { type: 'boolean', description: 'Due before today (UTC).' },
} as const;
const TASK_ON_GRAPH_MEMBERS = ['gid', 'resource_type', 'name', 'status', 'due_on', 'overdue'];

const meta = (extra: Record<string, JsonSchema>, required: string[]): JsonSchema => ({
  type: 'object',
  properties: {
    request_id: { type: 'string', format: 'uuid' },
    timestamp: { type: 'string', format: 'date-time' },
    ...extra,
  },
  required: ['request_id', 'timestamp', ...required],
  additionalProperties: false,
});

export const criticalPathResponse: JsonSchema = {
  type: 'object',
  properties: {
    data: {
      type: 'array',
      description:
        'The longest chain of open tasks the task waits on, nearest first: each one a dependency of the one before (the first, of the task itself). Among chains of equal length, the earliest created task is taken at each step.',
      items: {
        type: 'object',
        properties: taskOnGraphProperties,
        required: TASK_ON_GRAPH_MEMBERS,
        additionalProperties: false,
      },
    },
    meta: meta(
      { length: { type: 'integer', minimum: 0, description: 'How many tasks the chain holds.' } },
      ['length'],
    ),
  },
  required: ['data', 'meta'],
  additionalProperties: false,
};

export const bottlenecksResponse: JsonSchema = {
  type: 'object',
  properties: {
    data: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          ...taskOnGraphProperties,
          direct_count: {
            type: 'integer',
            minimum: 0,
            description: 'Open tasks that depend on this one directly.',
          },
          blocked_count: {
            type: 'integer',
            minimum: 0,
            description:
              'Distinct open tasks that wait on this one at any depth, through open tasks (exact).',
          },
        },
        required: [...TASK_ON_GRAPH_MEMBERS, 'direct_count', 'blocked_count'],
        additionalProperties: false,
      },
    },
    meta: meta({}, []),
  },
  required: ['data', 'meta'],
  additionalProperties: false,
};
