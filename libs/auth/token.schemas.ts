import { pageNumberQuery } from '../http/envelope.ts';
import type { JsonSchema } from '../http/validation.ts';
import { businessName } from './business-name.ts';
import { SCOPES } from './principal.ts';

export const createTokenBody: JsonSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    scopes: {
      type: 'array',
      items: { type: 'string', enum: SCOPES },
      minItems: 1,
      uniqueItems: true,
    },
    businesses: {
      type: 'array',
      items: businessName,
      minItems: 1,
      maxItems: 100,
      uniqueItems: true,
    },
    kind: { type: 'string', enum: ['user', 'service_account'] },
    expires_in_days: { type: 'integer', minimum: 1, maximum: 3650 },
  },
  required: ['name', 'scopes', 'businesses'],
  additionalProperties: false,
};

export const tokenIdParams: JsonSchema = {
  type: 'object',
  properties: { id: { type: 'string', pattern: '^tok_[0-9a-f]{16}$' } },
  required: ['id'],
  additionalProperties: false,
};

export const tokenListQuery: JsonSchema = pageNumberQuery;

const tokenMembers = {
  id: { type: 'string', pattern: '^tok_[0-9a-f]{16}$' },
  name: { type: 'string' },
  scopes: { type: 'array', items: { type: 'string', enum: SCOPES } },
  businesses: { type: 'array', items: { type: 'string' } },
  kind: { type: 'string', enum: ['user', 'service_account'] },
  expires_at: { type: ['string', 'null'], format: 'date-time' },
};
const meta = { $ref: '#/components/schemas/ResponseMeta' };

/** A token record: the shared members plus `extra`, nothing else. */
const tokenRecord = (extra: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  properties: { ...tokenMembers, ...extra },
  required: [...Object.keys(tokenMembers), ...Object.keys(extra)],
  additionalProperties: false,
});

const envelope = (data: JsonSchema): JsonSchema => ({
  type: 'object',
  properties: { data, meta },
  required: ['data', 'meta'],
});

export const tokenListResponse: JsonSchema = {
  type: 'object',
  properties: {
    // As the master key's listing shows a token: everything but the secret.
    data: {
      type: 'array',
      items: tokenRecord({
        created_at: { type: 'string', format: 'date-time' },
        revoked_at: { type: ['string', 'null'], format: 'date-time' },
        state: {
          type: 'string',
          enum: ['active', 'expired', 'revoked'],
          description: 'Whether the token is accepted now.',
        },
      }),
    },
    meta: { allOf: [meta, { required: ['total', 'page', 'per_page', 'total_pages'] }] },
  },
  required: ['data', 'meta'],
};

export const issuedTokenResponse = envelope(
  tokenRecord({
    token: { type: 'string', description: 'The secret; shown only in this response.' },
  }),
);

export const ownTokenResponse = envelope(
  tokenRecord({
    rate_limit: {
      type: 'object',
      description: 'The budget this token is charged against.',
      properties: {
        tier: { type: 'string', enum: ['user', 'service_account'] },
        limit: { type: 'integer', minimum: 1, description: 'Requests per window.' },
        window_seconds: { type: 'integer', minimum: 1 },
      },
      required: ['tier', 'limit', 'window_seconds'],
      additionalProperties: false,
    },
  }),
);
