import type { JsonSchema } from '../http/validation.ts';
import { OPT_FIELDS_PARAMETER } from './opt-fields.ts';
import { GID_PATTERN, taskRecord } from './task.schemas.ts';
import { statusFilter } from './task-collection.schemas.ts';

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
      description:
        'Tasks this one is to depend on, by gid. A task cannot depend on itself (422), and an edge that would close a cycle is a 409.',
      items: { type: 'string', pattern: GID_PATTERN },
      minItems: 1,
      maxItems: 100,
    },
  },
  required: ['dependencies'],
  additionalProperties: false,
};

export interface EdgeListQuery {
  limit: number;
  offset?: string;
  opt_fields?: string;
  depth: '1' | 'all';
}

export const edgeListQuery: JsonSchema = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 100 },
    offset: {
      type: 'string',
      minLength: 1,
      maxLength: 512,
      description:
        'An opaque cursor: `pagination.next_offset` of the previous page, sent back unchanged. The service issued it and signs it; any other text is a 422.',
    },
    opt_fields: OPT_FIELDS_PARAMETER,
    status: statusFilter(
      'List only tasks in these statuses (comma-separated or repeated); with depth=all the walk still passes through the others.',
    ),
    depth: {
      type: 'string',
      enum: ['1', 'all'],
      default: '1',
      description:
        '`1`: the tasks linked directly, in the order the edges were added. `all`: every task reachable at any depth, each with its `depth` (shortest distance), in gid order so that paging stays exactly-once while the graph changes; a 422 when more than 100,000 tasks are reachable.',
    },
  },
  additionalProperties: false,
};

export const edgeListResponse: JsonSchema = {
  type: 'object',
  properties: {
    data: {
      type: 'array',
      items: {
        ...taskRecord,
        properties: {
          ...(taskRecord.properties as object),
          depth: {
            type: 'integer',
            minimum: 1,
            description: 'With depth=all: how many edges away the task is, on the shortest path.',
          },
        },
      },
    },
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
