import { negotiate } from '../http/content-negotiation.ts';
import { single } from '../http/envelope.ts';
import { ValidationError } from '../http/errors.ts';
import { defineRoute, type RequestContext, type Route, type RouteResult } from '../http/route.ts';
import { answerEtag } from './answer-etag.ts';
import { queryContext } from './caller-context.ts';
import { queryCatalog } from './catalog-view.ts';
import { dimensionValuesRoute } from './dimension-values.routes.ts';
import { ANSWER_TYPES, type ExportFormat } from './export-format.ts';
import { queryBodySchema } from './parse/query.schemas.ts';
import type { QueryRequest } from './parse/query-parser.ts';
import { TooManyBucketsError } from './period/buckets.ts';
import { type AnalyticsDeps, type QueryResponse, runQuery } from './query.service.ts';
import { exportQuery } from './query-export.ts';
import { inUrl, queryInUrlSchema, readQ } from './query-in-url.ts';
import { catalogResponse, queryResponse } from './query-response.schemas.ts';

/**
 * A domain error of the query, placed in the request that caused it: only the route knows
 * request locations. Anything else passes through unchanged.
 */
function inRequest(error: unknown, body: QueryRequest): unknown {
  if (error instanceof TooManyBucketsError) {
    const at = body.dimensions?.indexOf(error.dimension) ?? -1;
    const loc = at >= 0 ? ['body', 'dimensions', at] : ['body', 'dimensions'];
    return ValidationError.at(loc, error.message, 'too_many_buckets');
  }
  return error;
}

/** Runs a checked query for the caller, its domain errors placed in the body. */
async function answer(
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

/**
 * The answer in the form the caller's Accept asks for: the JSON answer, or its rows as a CSV or
 * NDJSON file (`query-export.ts`). Either way the answer varies with Accept.
 */
async function answerAs(
  deps: AnalyticsDeps,
  body: QueryRequest,
  ctx: RequestContext,
  { etag }: { etag: boolean },
): Promise<RouteResult> {
  const type = negotiate(ctx.headers.accept, ANSWER_TYPES);
  if (type === 'application/json') {
    const result = await answer(deps, body, ctx);
    return {
      body: result,
      headers: { Vary: 'Accept', ...(etag ? { ETag: answerEtag(result) } : {}) },
    };
  }
  try {
    const { stream, headers } = await exportQuery(
      deps,
      body,
      queryContext(ctx),
      type as ExportFormat,
    );
    return { stream, headers: { ...headers, Vary: 'Accept' } };
  } catch (error) {
    throw inRequest(error, body);
  }
}

/** The export forms as published: a CSV file, or one JSON row per line. */
const EXPORTS = {
  content: {
    'text/csv': {
      type: 'string',
      description:
        'RFC 4180: a header row of the row keys (with a comparison, `comparison.<metric>` then `change.<metric>`), CRLF line ends, null as an empty field.',
    },
    'application/x-ndjson': {
      type: 'string',
      description: 'One JSON object per data row, as the JSON answer gives its rows.',
    },
  },
  headers: {
    'Content-Disposition': {
      description: 'An export comes as a file to save (`attachment; filename="….csv"`).',
      schema: { type: 'string' },
    },
    'Cairn-Warnings': {
      description:
        "An export's warning codes, comma-separated (`result_truncated` past `CAIRN_EXPORT_MAX_ROWS`, `stale_data`, …); absent when there are none.",
      schema: { type: 'string' },
    },
  },
};

const RESPONSES = {
  '406': 'NotAcceptable',
  '422': 'QueryUnprocessable',
  '429': 'QueryRefused',
  '503': 'QueryUnavailable',
} as const;

export function queryRoutes(deps: AnalyticsDeps): Route[] {
  // One schema object for both forms: compiled once, published alike.
  const querySchema = queryBodySchema(deps.maxRows);
  return [
    defineRoute<unknown, unknown, QueryRequest>({
      method: 'post',
      path: '/api/v1/query',
      operationId: 'runQuery',
      summary: 'Run an analytics query',
      tags: ['analytics'],
      scope: 'analytics:read',
      body: querySchema,
      successStatus: 200,
      response: queryResponse,
      alternatives: EXPORTS,
      responses: RESPONSES,
      async handle({ body, ctx }) {
        // A POST answer has no entity tag: nothing revalidates it.
        return answerAs(deps, body, ctx, { etag: false });
      },
    }),
    // The same query in the URL, so an answer can be revalidated: its ETag in If-None-Match
    // gets a 304 while the answer, volatile metadata aside, is unchanged.
    defineRoute<unknown, { q: string }, unknown, { query: QueryRequest | undefined }>({
      method: 'get',
      path: '/api/v1/query',
      operationId: 'getQuery',
      summary: 'Run an analytics query given in the URL',
      tags: ['analytics'],
      scope: 'analytics:read',
      query: queryInUrlSchema(querySchema),
      checks: ({ query }) => ({ query: () => readQ(querySchema, query.q) }),
      successStatus: 200,
      response: queryResponse,
      alternatives: EXPORTS,
      responses: RESPONSES,
      etag: 'read',
      cacheControl: 'private, no-cache',
      async handle({ checked, ctx }) {
        // Checked before the handler runs: a request without a readable `q` never gets here.
        const body = checked.query as QueryRequest;
        return answerAs(deps, body, ctx, { etag: true }).catch((error: unknown) => {
          throw inUrl(error);
        });
      },
    }),
    defineRoute<unknown, unknown, unknown>({
      method: 'get',
      path: '/api/v1/query/catalog',
      operationId: 'getQueryCatalog',
      summary: 'List the metrics, dimensions and periods a query may name',
      tags: ['analytics'],
      scope: 'analytics:read',
      successStatus: 200,
      response: catalogResponse,
      async handle({ ctx }) {
        return { body: single(queryCatalog(), ctx.requestId) };
      },
    }),
    dimensionValuesRoute(deps),
  ];
}
