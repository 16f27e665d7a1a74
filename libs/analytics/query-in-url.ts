import { ValidationError, type ValidationIssue } from '../http/errors.ts';
import { type JsonSchema, validate } from '../http/validation.ts';
import type { QueryRequest } from './parse/query-parser.ts';

/**
 * The GET form of `/query` carries the very object the POST body takes, as JSON in one query
 * parameter `q`. Its issues are located under `["query","q",…]` where the POST's are under
 * `["body",…]`: the same checks, placed where this request put the query.
 */

const AT_Q = ['query', 'q'] as const;

/**
 * The query string of the GET form: `q` alone. `contentMediaType`/`contentSchema` are JSON
 * Schema's own words for "a string holding JSON of this schema": Ajv takes them as annotations
 * (the text is parsed and checked by `readQ`), and the API description publishes them as the
 * parameter's `content`.
 */
export function queryInUrlSchema(body: JsonSchema): JsonSchema {
  return {
    type: 'object',
    properties: {
      q: {
        type: 'string',
        description:
          'The query as JSON, the same object `POST /api/v1/query` takes as its body, URL-encoded. The request line and headers together must fit in 16 KiB: a longer query is for the POST.',
        contentMediaType: 'application/json',
        contentSchema: body,
      },
    },
    required: ['q'],
    additionalProperties: false,
  };
}

/** Issues located in the body, moved under `q`; any other location stays. */
function underQ(issues: readonly ValidationIssue[]): ValidationIssue[] {
  return issues.map((issue) =>
    issue.loc[0] === 'body' ? { ...issue, loc: [...AT_Q, ...issue.loc.slice(1)] } : issue,
  );
}

/**
 * The query `q` holds, checked against the POST's body schema (defaults filled in). A `q` that
 * is missing or not one string is the query schema's to report, so nothing is said twice.
 */
export function readQ(body: JsonSchema, q: unknown): QueryRequest | undefined {
  if (typeof q !== 'string') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(q);
  } catch (error) {
    throw ValidationError.at(
      [...AT_Q],
      `Invalid JSON: ${(error as Error).message}`,
      'json_invalid',
    );
  }
  try {
    return validate<QueryRequest>(body, value, 'body');
  } catch (error) {
    throw inUrl(error);
  }
}

/** A validation error of the query (the parser's, too many buckets) placed under `q`. */
export function inUrl(error: unknown): unknown {
  return error instanceof ValidationError ? new ValidationError(underQ(error.issues)) : error;
}
