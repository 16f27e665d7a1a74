/** Named schemas every operation shares: the envelope's meta, problem details, the 422 body. */
export const SCHEMAS = {
  ResponseMeta: {
    type: 'object',
    description: 'Envelope metadata; page-number lists add the paging members.',
    properties: {
      request_id: { type: 'string', format: 'uuid' },
      timestamp: { type: 'string', format: 'date-time' },
      total: { type: 'integer', minimum: 0 },
      page: { type: 'integer', minimum: 1 },
      per_page: { type: 'integer', minimum: 1 },
      total_pages: { type: 'integer', minimum: 0 },
    },
    required: ['request_id', 'timestamp'],
  },
  Problem: {
    type: 'object',
    description:
      'RFC 9457 problem details. Extra members (e.g. `cycle`, `required_scope`) may appear.',
    properties: {
      type: { type: 'string', format: 'uri' },
      title: { type: 'string' },
      status: { type: 'integer', minimum: 400, maximum: 599 },
      detail: { type: 'string' },
      instance: { type: 'string' },
      request_id: { type: 'string' },
      trace_id: {
        type: 'string',
        pattern: '^[0-9a-f]{32}$',
        description:
          'The W3C trace id of this request, when tracing is configured and the request was sampled.',
      },
      businesses: {
        type: 'array',
        items: { type: 'string' },
        description:
          'On a 404 for a business the token cannot read (whether or not it exists elsewhere): the businesses it can.',
      },
      errors: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            field: { type: 'string' },
            code: { type: 'string' },
            message: { type: 'string' },
          },
          required: ['field', 'code', 'message'],
        },
      },
    },
    required: ['type', 'title', 'status', 'detail', 'instance'],
  },
  ValidationIssue: {
    type: 'object',
    properties: {
      loc: {
        type: 'array',
        items: { type: ['string', 'integer'] },
        description: 'Where the problem is, e.g. `["body","metrics",0]`, `["query","limit"]`.',
      },
      msg: { type: 'string' },
      type: {
        type: 'string',
        description:
          'e.g. `missing`, `int_parsing`, `greater_than_equal`, `enum`, `extra_forbidden`.',
      },
    },
    required: ['loc', 'msg', 'type'],
    additionalProperties: false,
  },
  ValidationError: {
    type: 'object',
    properties: {
      detail: { type: 'array', items: { $ref: '#/components/schemas/ValidationIssue' } },
    },
    required: ['detail'],
    additionalProperties: false,
  },
};
