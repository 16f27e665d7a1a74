import type { JsonSchema } from '../platform/validation.ts';
import { SCOPES } from './principal.ts';

export const BUSINESS_PATTERN = '^[A-Za-z0-9_.-]{1,100}$';

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
      items: { type: 'string', pattern: BUSINESS_PATTERN },
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
