import { pageNumberQuery } from '../http/envelope.ts';
import type { JsonSchema } from '../http/validation.ts';

export const VIEW_ID_PATTERN = '^view_[0-9a-f]{16}$';
export const EMBED_ID_PATTERN = '^emb_[0-9a-f]{16}$';

const meta = { $ref: '#/components/schemas/ResponseMeta' };

/** `POST` and `PUT /api/v1/views`: the query is checked by the very schema `/query` uses. */
export const viewBody = (querySchema: JsonSchema): JsonSchema => ({
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    query: {
      ...querySchema,
      description:
        'The query as `POST /api/v1/query` takes it, checked alike (a bad one is the same 422, located under `["body","query",…]`).',
    },
    prometheus: {
      type: 'boolean',
      default: false,
      description:
        'Serve its answer as gauges on `GET /metrics/views` (`cairn_view_value`). Refused when saved (422 `too_many_series` at `["body","prometheus"]`) if its answer has more series than `CAIRN_VIEW_METRICS_MAX_SERIES` now: the count depends on the data, not on the request alone.',
    },
  },
  required: ['name', 'query'],
  additionalProperties: false,
});

export const viewIdParams: JsonSchema = {
  type: 'object',
  properties: { id: { type: 'string', pattern: VIEW_ID_PATTERN } },
  required: ['id'],
  additionalProperties: false,
};

export const embedIdParams: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', pattern: VIEW_ID_PATTERN },
    embed_id: { type: 'string', pattern: EMBED_ID_PATTERN },
  },
  required: ['id', 'embed_id'],
  additionalProperties: false,
};

export const viewListQuery: JsonSchema = pageNumberQuery;

const view: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', pattern: VIEW_ID_PATTERN },
    name: { type: 'string' },
    query: { type: 'object', description: 'The saved query, its defaults filled in.' },
    business: { type: 'string', description: 'The business the query names, when it names one.' },
    businesses: {
      type: 'array',
      items: { type: 'string' },
      description:
        'What the view reads: the business its query names, or every business of the token that saved it. Only a token that can read all of them sees the view.',
    },
    prometheus: { type: 'boolean' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
  required: ['id', 'name', 'query', 'businesses', 'prometheus', 'created_at', 'updated_at'],
  additionalProperties: false,
};

const envelope = (data: JsonSchema): JsonSchema => ({
  type: 'object',
  properties: { data, meta },
  required: ['data', 'meta'],
});

const paged = (item: JsonSchema): JsonSchema => ({
  type: 'object',
  properties: {
    data: { type: 'array', items: item },
    meta: { allOf: [meta, { required: ['total', 'page', 'per_page', 'total_pages'] }] },
  },
  required: ['data', 'meta'],
});

export const viewResponse = envelope(view);
export const viewListResponse = paged(view);

/** An origin a page embedding the chart may have: scheme, host and port, no path. */
const ORIGIN_PATTERN = '^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$';

export const embedBody = (filterSchema: JsonSchema): JsonSchema => ({
  type: 'object',
  properties: {
    expires_in_days: { type: 'integer', minimum: 1, maximum: 365 },
    locked_filters: {
      ...filterSchema,
      description:
        'Filters added to every answer the embed gets, as `filters` of a query; a viewer may narrow further, never on a dimension these name.',
    },
    allowed_origins: {
      type: 'array',
      description:
        'Origins whose pages may frame the chart (`frame-ancestors`); none: no page may.',
      items: { type: 'string', maxLength: 200, pattern: ORIGIN_PATTERN },
      maxItems: 20,
      uniqueItems: true,
    },
  },
  required: ['expires_in_days'],
  additionalProperties: false,
});

const embedMembers = {
  id: { type: 'string', pattern: EMBED_ID_PATTERN },
  url: {
    type: 'string',
    description: 'The chart page, `/embed/{embed_token}`, relative to this server.',
  },
  expires_at: { type: 'string', format: 'date-time' },
  locked_filters: { type: 'array', items: { type: 'object' } },
  allowed_origins: { type: 'array', items: { type: 'string' } },
};

export const issuedEmbedResponse = envelope({
  type: 'object',
  properties: {
    ...embedMembers,
    embed_token: {
      type: 'string',
      description: 'The secret of the embed; shown only in this response, kept only hashed.',
    },
  },
  required: [...Object.keys(embedMembers), 'embed_token'],
  additionalProperties: false,
});

const { url: _url, ...listedMembers } = embedMembers;
export const embedListResponse = envelope({
  type: 'array',
  items: {
    type: 'object',
    properties: {
      ...listedMembers,
      created_at: { type: 'string', format: 'date-time' },
      revoked_at: { type: ['string', 'null'], format: 'date-time' },
      state: { type: 'string', enum: ['active', 'expired', 'revoked'] },
    },
    required: [...Object.keys(listedMembers), 'created_at', 'revoked_at', 'state'],
    additionalProperties: false,
  },
});

export const embedTokenParams: JsonSchema = {
  type: 'object',
  properties: { embed_token: { type: 'string', minLength: 1, maxLength: 200 } },
  required: ['embed_token'],
  additionalProperties: false,
};

export const embedAnswerQuery: JsonSchema = {
  type: 'object',
  properties: {
    q: {
      type: 'string',
      description:
        'Optional: `{"filters":[…]}` as JSON, filters that narrow the view further. Any other member, or a filter on a locked dimension, is a 403.',
      contentMediaType: 'application/json',
    },
  },
  additionalProperties: false,
};

export const embedPageQuery: JsonSchema = {
  type: 'object',
  properties: {
    q: { type: 'string', description: 'Passed on to `./answer` as it is.' },
  },
  additionalProperties: false,
};
