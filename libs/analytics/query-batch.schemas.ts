import { enforcedInCode, TEXT_CHECKED_PER_ITEM } from '../http/json-schema.ts';
import type { JsonSchema } from '../http/validation.ts';
import { queryResponse } from './query-response.schemas.ts';

export const MAX_BATCH_QUERIES = 20;

/**
 * `{queries: [...]}`: each item an object, checked as a `/query` body one by one after this
 * schema (query-batch.ts), so a bad query gets its own 422 and the others their answers. The
 * document shows the `/query` body as what an item is meant to be, beside any object: an item
 * that is not a valid query is no reason to refuse the batch.
 */
export const queryBatchBody = (querySchema: JsonSchema): JsonSchema => ({
  type: 'object',
  properties: {
    queries: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_BATCH_QUERIES,
      description:
        'Queries as `POST /api/v1/query` takes them, answered in this order. Identical queries run once. The request counts as one request per query against the rate limit.',
      items: {
        type: 'object',
        description:
          'A `POST /api/v1/query` body. One that is not a valid query is answered in its place with its 422 in `error`, as `/query` would answer it.',
        ...enforcedInCode({ anyOf: [querySchema, { type: 'object' }] }),
      },
    },
  },
  required: ['queries'],
  additionalProperties: false,
  // An item with bad text is that item's 422, like any other item that is no valid query.
  [TEXT_CHECKED_PER_ITEM]: ['queries'],
});

const answer = queryResponse.properties as Record<string, JsonSchema>;

export const queryBatchResponse: JsonSchema = {
  type: 'object',
  properties: {
    data: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_BATCH_QUERIES,
      description: 'One answer per query, in the order of `queries`.',
      items: {
        type: 'object',
        description:
          'What `POST /api/v1/query` would answer to this query: its status, and on 200 its `data`, `metadata` and `warnings`, otherwise its failure as `error`.',
        properties: {
          status: { type: 'integer', minimum: 200, maximum: 599 },
          data: answer.data,
          metadata: answer.metadata,
          warnings: answer.warnings,
          error: {
            description:
              'The 422 body (`{detail:[{loc,msg,type}]}`, locations under `body` as for `/query`) or the problem `/query` would have answered.',
            oneOf: [
              { $ref: '#/components/schemas/ValidationError' },
              { $ref: '#/components/schemas/Problem' },
            ],
          },
        },
        required: ['status'],
        additionalProperties: false,
      },
    },
  },
  required: ['data'],
  additionalProperties: false,
};
