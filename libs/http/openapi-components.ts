import { ERROR_CODES, type ErrorCode } from './errors.ts';
import { SCHEMAS as schemas } from './openapi-schemas.ts';

/**
 * What parseIfMatch (tasks/task-etag.ts) takes, whitespace trimmed as it trims: `*`, or a
 * comma-separated list of entity tags (RFC 9110), a tag holding no comma since commas split.
 */
const ENTITY_TAG = '(W/)?"[\\x21\\x23-\\x2b\\x2d-\\x7e\\x80-\\xff]*"';
export const IF_MATCH_PATTERN = `^\\s*(\\*|${ENTITY_TAG}(\\s*,\\s*${ENTITY_TAG})*)\\s*$`;

/** Shared pieces of the OpenAPI document: every operation points at these by `$ref`. */

export const PROBLEM_JSON = 'application/problem+json';

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': ref('headers', 'X-RateLimit-Limit'),
  'X-RateLimit-Remaining': ref('headers', 'X-RateLimit-Remaining'),
  'X-RateLimit-Reset': ref('headers', 'X-RateLimit-Reset'),
};

/** Headers every response carries, success or failure. */
export const COMMON_RESPONSE_HEADERS = {
  'X-Request-ID': ref('headers', 'X-Request-ID'),
  ...RATE_LIMIT_HEADERS,
};

const integerHeader = (description: string) => ({
  description,
  schema: { type: 'integer', minimum: 0 },
});

const headers = {
  'X-Request-ID': {
    description:
      'The caller’s UUID v4 `X-Request-ID` when it sent one, otherwise a generated one; equals `meta.request_id`.',
    schema: { type: 'string', format: 'uuid' },
  },
  'X-RateLimit-Limit': integerHeader(
    'Requests allowed per minute for this principal (60 anonymous, 1000 user token, 5000 service account).',
  ),
  'X-RateLimit-Remaining': integerHeader('Requests left in the current window.'),
  'X-RateLimit-Reset': integerHeader('When the current window ends, in Unix seconds.'),
  'Retry-After': integerHeader('Seconds to wait before trying again.'),
  'WWW-Authenticate': {
    description:
      'The bearer challenge (`error="invalid_token"` when a token was sent but refused).',
    schema: { type: 'string' },
  },
  ETag: {
    description:
      'The version of the object answered, a strong entity tag: send it back in `If-Match` to write only that version, or in `If-None-Match` to get a 304 while it is current.',
    schema: { type: 'string' },
  },
  'Idempotent-Replayed': {
    description:
      '`true` when this is the stored answer to an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
};

const parameters = {
  RequestId: {
    name: 'X-Request-ID',
    in: 'header',
    required: false,
    description:
      'A UUID v4 to trace this request; echoed back. Anything else is accepted and replaced by a generated one.',
    // Not `format: uuid`: the service takes any value, so the document may refuse none.
    schema: { type: 'string' },
  },
  IfMatch: {
    name: 'If-Match',
    in: 'header',
    required: false,
    description:
      'Write only if the object is still this version: `*` or ETags, as `"3"`. Otherwise 412, and nothing changes; a malformed header is a 400.',
    schema: { type: 'string', pattern: IF_MATCH_PATTERN },
  },
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: 'ETags the caller holds: when one is current the answer is 304 without a body.',
    schema: { type: 'string' },
  },
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Same principal + key + same request within 24 h replays the first response; the same key with a different request is a 422 problem, and while the first is still running a 409 problem.',
    schema: { type: 'string', minLength: 1, maxLength: 255 },
  },
};

const problemResponse = (code: ErrorCode, description: string, extra: object = {}) => ({
  description: `${ERROR_CODES[code].title}: ${description}`,
  headers: { ...COMMON_RESPONSE_HEADERS, ...extra },
  content: {
    [PROBLEM_JSON]: {
      schema: ref('schemas', 'Problem'),
      example: {
        type: `urn:cairn:problem:${code.replace(/_/g, '-')}`,
        title: ERROR_CODES[code].title,
        status: ERROR_CODES[code].status,
        detail: description,
        instance: '/api/v1/…',
        request_id: '3f0e9c1e-5d7a-4b8e-9d55-0c9a3f1b2c4d',
      },
    },
  },
});

/** Response name → [status, component]; operations refer to them by status. */
const responses = {
  // Answered as Node's HTTP parser refuses the request (apps/server/client-error-answers.ts), before any
  // middleware: no X-Request-ID or rate-limit headers.
  HeadersTooLarge: {
    description:
      'Request Header Fields Too Large: the request line (path and query, so a long `q` too) and the headers together exceed 16 KiB. The connection is closed. Send a long query by POST instead.',
    content: { [PROBLEM_JSON]: { schema: ref('schemas', 'Problem') } },
  },
  BadRequest: problemResponse(
    'bad_request',
    'the body is not valid JSON or cannot be decompressed as its Content-Encoding says, the path holds a malformed percent-encoding, the Idempotency-Key is empty or over 255 characters, or the If-Match header is neither `*` nor a list of entity tags.',
  ),
  Unauthorized: problemResponse(
    'unauthorized',
    'no bearer token, or one that is unknown, revoked or expired.',
    {
      'WWW-Authenticate': ref('headers', 'WWW-Authenticate'),
    },
  ),
  Forbidden: problemResponse('forbidden', 'the token lacks the scope this operation needs.'),
  NotFound: problemResponse(
    'not_found',
    "no such object, or one outside the token’s businesses. A business the token cannot read, whether it exists or not, is `No business '…' is readable with this token.` with a `businesses` member listing those it can.",
  ),
  Conflict: problemResponse(
    'conflict',
    'the state forbids it (e.g. a dependency cycle), or a request with the same Idempotency-Key is still running.',
  ),
  PreconditionFailed: problemResponse(
    'precondition_failed',
    'If-Match names a version that is no longer current; nothing was changed. `ETag` gives the current one.',
    { ETag: ref('headers', 'ETag') },
  ),
  NotModified: {
    description: 'Not Modified: If-None-Match names the current version; no body.',
    headers: { ...COMMON_RESPONSE_HEADERS, ETag: ref('headers', 'ETag') },
  },
  PayloadTooLarge: problemResponse('payload_too_large', 'the body is over 1 MiB.'),
  UnsupportedMediaType: problemResponse(
    'unsupported_media_type',
    'send the body as application/json.',
  ),
  NotAcceptable: problemResponse(
    'not_acceptable',
    'none of the media types in Accept is one this operation answers with; `detail` names those it does.',
  ),
  ValidationFailed: {
    description:
      'Invalid input, as `{detail:[{loc,msg,type}]}`; an Idempotency-Key reused for a different request is a problem+json instead.',
    headers: COMMON_RESPONSE_HEADERS,
    // A validator may take a `+json` answer for `application/json` (both are JSON): under that
    // type either body validates, and the two cannot be mistaken for each other (`detail` is an
    // array in one, a string in the other), so whichever entry a validator picks is right.
    content: {
      'application/json': {
        schema: { oneOf: [ref('schemas', 'ValidationError'), ref('schemas', 'Problem')] },
      },
      [PROBLEM_JSON]: { schema: ref('schemas', 'Problem') },
    },
  },
  RateLimited: problemResponse(
    'rate_limited',
    'too many requests for this principal in this minute.',
    {
      'Retry-After': ref('headers', 'Retry-After'),
    },
  ),
  InternalError: problemResponse(
    'internal',
    'nothing internal is revealed; the request id finds it in the logs.',
  ),
  Unavailable: problemResponse(
    'unavailable',
    'an engine is not answering; or, as `urn:cairn:problem:storage-full`, `storage-read-only` or `out-of-memory`, its storage is full, takes no writes, or it ran out of memory (nothing was changed; Retry-After says when to try again).',
    {
      'Retry-After': ref('headers', 'Retry-After'),
    },
  ),
  GatewayTimeout: problemResponse(
    'timeout',
    'the database did not answer in time; nothing was changed unless a retry with the same Idempotency-Key says so.',
  ),
  QueryRefused: problemResponse(
    'rate_limited',
    'too many requests for this principal in this minute, or too many of its analytics queries already running and waiting (`running`, `queued`, `max_running`, `max_queued` say how many).',
    { 'Retry-After': ref('headers', 'Retry-After') },
  ),
  QueryUnavailable: problemResponse(
    'unavailable',
    'no query slot came free within the wait bound (the service is busy with other callers’ queries), the server is shutting down, or an engine is not answering.',
    { 'Retry-After': ref('headers', 'Retry-After') },
  ),
  EmbedUnauthorized: problemResponse(
    'unauthorized',
    'the embed token is unknown, revoked or expired (one answer for all three). An embed token is no API credential, nor is an API token an embed token.',
  ),
  EmbedForbidden: problemResponse(
    'forbidden',
    '`q` holds something other than `filters`, or a filter on a dimension the embed locks.',
  ),
  QueryUnprocessable: {
    description:
      'Invalid input, as `{detail:[{loc,msg,type}]}`; a problem when an Idempotency-Key is reused for a different request; or a `urn:cairn:problem:memory-limit-exceeded` problem: the query needed more memory than one query may use (`max_memory_bytes`), and narrower periods, fewer businesses or coarser dimensions need less.',
    headers: COMMON_RESPONSE_HEADERS,
    // As in ValidationFailed: a problem may be read against the `application/json` entry.
    content: {
      'application/json': {
        schema: { oneOf: [ref('schemas', 'ValidationError'), ref('schemas', 'Problem')] },
      },
      [PROBLEM_JSON]: { schema: ref('schemas', 'Problem') },
    },
  },
};

export type ResponseName = keyof typeof responses;
export const responseRef = (name: ResponseName) => ref('responses', name);
export const parameterRef = (name: keyof typeof parameters) => ref('parameters', name);

export const COMPONENTS = {
  securitySchemes: {
    bearerAuth: {
      type: 'http',
      scheme: 'bearer',
      description:
        'An API token (`cairn_…`): from the first-start output, `POST /api/v1/tokens` or `npm run cli -- tokens create`. Each operation’s requirement lists the scope it needs; a token is bound to businesses, and anything outside them is 404.',
    },
    masterKey: {
      type: 'http',
      scheme: 'bearer',
      description:
        'The master key (`CAIRN_MASTER_KEY`, or `DATA_DIR/master.key` in embedded mode). Accepted only by the token endpoints.',
    },
  },
  schemas,
  headers,
  parameters,
  responses,
};
