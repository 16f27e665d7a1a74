import { businessName } from '../auth/business-name.ts';
import { enforcedInCode } from '../http/json-schema.ts';
import type { JsonSchema } from '../http/validation.ts';
import { TASK_STATUSES } from './task-status.ts';

export const GID_PATTERN = '^[A-Za-z0-9_-]{1,64}$';

export const gidParams: JsonSchema = {
  type: 'object',
  properties: { gid: { type: 'string', pattern: GID_PATTERN } },
  required: ['gid'],
  additionalProperties: false,
};

const name = { type: 'string', minLength: 1, maxLength: 500 };

/**
 * Due dates the analytics side can hold exactly: ClickHouse's Date32 spans these years. A date
 * outside is refused rather than stored here and clamped there.
 */
export const dueDate = {
  type: 'string',
  format: 'date',
  formatMinimum: '1900-01-01',
  formatMaximum: '2299-12-31',
} as const;
const dueOn = { ...dueDate, type: ['string', 'null'] };
const label = { type: ['string', 'null'], minLength: 1, maxLength: 200 };

export const createTaskBody: JsonSchema = {
  type: 'object',
  properties: {
    business: businessName,
    name,
    project: label,
    assignee: label,
    status: { type: 'string', enum: TASK_STATUSES },
    due_on: dueOn,
  },
  required: ['business', 'name'],
  additionalProperties: false,
};

/** PUT: every member optional; `business` is accepted only unchanged (checked by the use case). */
export const updateTaskBody: JsonSchema = {
  type: 'object',
  properties: {
    business: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      description:
        'The task’s own business, if sent at all: a task cannot move to another business, and any other value is a 422.',
    },
    name,
    project: label,
    assignee: label,
    status: { type: 'string', enum: TASK_STATUSES },
    due_on: dueOn,
  },
  additionalProperties: false,
  // The use case refuses a PUT that changes nothing: `business` alone is no change.
  ...enforcedInCode({
    anyOf: ['name', 'project', 'assignee', 'status', 'due_on'].map((member) => ({
      required: [member],
    })),
  }),
};

export const taskRecord: JsonSchema = {
  type: 'object',
  properties: {
    gid: { type: 'string' },
    resource_type: { type: 'string', const: 'task' },
    name: { type: 'string' },
    business: { type: 'string' },
    project: { type: ['string', 'null'] },
    assignee: { type: ['string', 'null'] },
    status: { type: 'string', enum: TASK_STATUSES },
    due_on: { type: ['string', 'null'], format: 'date' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    completed_at: { type: ['string', 'null'], format: 'date-time' },
  },
  required: ['gid', 'resource_type', 'name'],
};
