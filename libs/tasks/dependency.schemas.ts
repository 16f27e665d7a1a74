import type { JsonSchema } from '../platform/validation.ts';
import { GID_PATTERN, taskRecord } from './task.schemas.ts';

export const dependencyParams: JsonSchema = {
  type: 'object',
  properties: {
    gid: { type: 'string', pattern: GID_PATTERN },
    dependency_gid: { type: 'string', pattern: GID_PATTERN },
  },
  required: ['gid', 'dependency_gid'],
  additionalProperties: false,
};

export const addDependenciesBody: JsonSchema = {
  type: 'object',
  properties: {
    dependencies: {
      type: 'array',
      items: { type: 'string', pattern: GID_PATTERN },
      minItems: 1,
      maxItems: 100,
    },
  },
  required: ['dependencies'],
  additionalProperties: false,
};

/** Task members `opt_fields` may add; gid, resource_type and name are always present. */
export const OPT_FIELDS = [
  'business',
  'project',
  'assignee',
  'status',
  'due_on',
  'created_at',
  'updated_at',
  'completed_at',
] as const;
export type OptField = (typeof OPT_FIELDS)[number];

export interface EdgeListQuery {
  limit: number;
  offset?: string;
  opt_fields?: string;
}

export const edgeListQuery: JsonSchema = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 100 },
    offset: { type: 'string', minLength: 1, maxLength: 512 },
    opt_fields: { type: 'string', maxLength: 500 },
  },
  additionalProperties: false,
};

export const edgeListResponse: JsonSchema = {
  type: 'object',
  properties: {
    data: { type: 'array', items: taskRecord },
    meta: { $ref: '#/components/schemas/ResponseMeta' },
    pagination: {
      type: 'object',
      properties: {
        limit: { type: 'integer', minimum: 1 },
        has_more: { type: 'boolean' },
        next_offset: { type: ['string', 'null'] },
      },
      required: ['limit', 'has_more'],
    },
  },
  required: ['data', 'meta', 'pagination'],
};
