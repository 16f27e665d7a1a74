import { ValidationError } from '../http/errors.ts';
import type { RequestContext } from '../http/route.ts';
import { queryContext } from './caller-context.ts';
import type { QueryRequest } from './parse/query-parser.ts';
import { TooManyBucketsError } from './period/buckets.ts';
import { type AnalyticsDeps, type QueryResponse, runQuery } from './query.service.ts';

/**
 * A domain error of the query, placed in the request that caused it: only the route knows
 * request locations. Anything else passes through unchanged.
 */
export function inRequest(error: unknown, body: QueryRequest): unknown {
  if (error instanceof TooManyBucketsError) {
    const at = body.dimensions?.indexOf(error.dimension) ?? -1;
    const loc = at >= 0 ? ['body', 'dimensions', at] : ['body', 'dimensions'];
    return ValidationError.at(loc, error.message, 'too_many_buckets');
  }
  return error;
}

/** Runs a checked query for the caller, its domain errors placed in the body. */
export async function answer(
  deps: AnalyticsDeps,
  body: QueryRequest,
  ctx: RequestContext,
): Promise<QueryResponse> {
  try {
    return await runQuery(deps, body, queryContext(ctx));
  } catch (error) {
    throw inRequest(error, body);
  }
}
