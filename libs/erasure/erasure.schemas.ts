import { businessName } from '../auth/business-name.ts';
import type { JsonSchema } from '../http/validation.ts';
import { ERASURE_STEPS } from './erasure.service.ts';

export const businessParams: JsonSchema = {
  type: 'object',
  properties: { business: businessName },
  required: ['business'],
  additionalProperties: false,
};

const timestamp = { type: 'string', format: 'date-time' };

/** An erasure as its status resource shows it. */
export const erasureView: JsonSchema = {
  type: 'object',
  properties: {
    id: {
      type: 'string',
      format: 'uuid',
      description:
        'Names this run of the erasure in the service’s logs, which never name the business.',
    },
    business: { type: 'string' },
    status: {
      type: 'string',
      enum: ['running', 'done'],
      description:
        '`done`: nothing of the business remains in the service’s data (what the engines keep a while longer is listed in the operations guide).',
    },
    step: {
      type: 'string',
      enum: [...ERASURE_STEPS, 'done'],
      description: 'The step under way (the order is fixed: each step runs again if interrupted).',
    },
    progress: {
      type: 'object',
      properties: {
        done: { type: 'integer', minimum: 0, description: 'Steps finished.' },
        total: { type: 'integer', minimum: 1 },
      },
      required: ['done', 'total'],
      additionalProperties: false,
    },
    tasks_deleted: { type: 'integer', minimum: 0 },
    facts_deleted: {
      type: 'integer',
      minimum: 0,
      description: 'Rows deleted from ClickHouse (facts and rollups).',
    },
    tokens_revoked: {
      type: 'integer',
      minimum: 0,
      description: 'Tokens revoked because this business was their only one.',
    },
    started_at: timestamp,
    finished_at: { type: ['string', 'null'], format: 'date-time' },
  },
  required: [
    'id',
    'business',
    'status',
    'step',
    'progress',
    'tasks_deleted',
    'facts_deleted',
    'tokens_revoked',
    'started_at',
    'finished_at',
  ],
  additionalProperties: false,
};

export const erasureResponse: JsonSchema = {
  type: 'object',
  properties: { data: erasureView, meta: { $ref: '#/components/schemas/ResponseMeta' } },
  required: ['data', 'meta'],
};
