import { negotiate } from '../http/content-negotiation.ts';
import { single } from '../http/envelope.ts';
import { AppError } from '../http/errors.ts';
import { defineRoute, type RequestContext, type Route, type RouteResult } from '../http/route.ts';
import { answerEtag } from './answer-etag.ts';
import { queryContext } from './caller-context.ts';
import { queryCatalog } from './catalog-view.ts';
import type { ExportFormat } from './export-format.ts';
import { forecastRoute } from './forecast/forecast.routes.ts';
import { queryBodySchema } from './parse/query.schemas.ts';
import type { QueryRequest } from './parse/query-parser.ts';
import type { AnalyticsDeps } from './query.service.ts';
import { answer, inRequest } from './query-answer.ts';
import { queryBatchBody, queryBatchResponse } from './query-batch.schemas.ts';
import { answerBatch, BATCH_PATH, type BatchRequest } from './query-batch.ts';
import { exportQuery } from './query-export.ts';
import { inUrl, queryInUrlSchema, readQ } from './query-in-url.ts';
import { catalogResponse, queryResponse } from './query-response.schemas.ts';
import { dimensionValuesRoute } from './values/dimension-values.routes.ts';

/** JSON answers only: a file of the rows is the export operation's. */
function jsonOnly(accept: string | undefined, path: string): void {
  try {
    negotiate(accept, ['application/json']);
  } catch {
    throw new AppError(
      'not_acceptable',
      `${path} answers with application/json only; the rows as a file (text/csv or application/x-ndjson) come from /api/v1/query/export with the same query.`,
    );
  }
}

/** The query's rows as the file Accept asks for (`query-export.ts`): CSV unless NDJSON is preferred. */
async function exported(
  deps: AnalyticsDeps,
  body: QueryRequest,
  ctx: RequestContext,
): Promise<RouteResult> {
  const type = negotiate(ctx.headers.accept, EXPORT_FORMATS);
  try {
    const { stream, headers } = await exportQuery(deps, body, queryContext(ctx), type);
    return { stream, headers: { ...headers, Vary: 'Accept' } };
  } catch (error) {
    throw inRequest(error, body);
  }
}

const EXPORT_FORMATS: readonly ExportFormat[] = ['text/csv', 'application/x-ndjson'];

/** The export forms as published: a CSV file, or one JSON row per line. */
const FILES = {
  'text/csv': {
    type: 'string',
    description:
      'RFC 4180: a header row of the row keys (with a comparison, `comparison.<metric>` then `change.<metric>`), CRLF line ends, null as an empty field.',
  },
  'application/x-ndjson': {
    type: 'string',
    description: 'One JSON object per data row, as the JSON answer gives its rows.',
  },
};

const FILE_HEADERS = {
  'Content-Disposition': {
    description: 'An export comes as a file to save (`attachment; filename="….csv"`).',
    schema: { type: 'string' },
  },
  'Cairn-Warnings': {
    description:
      "An export's warning codes, comma-separated (`result_truncated` past `CAIRN_EXPORT_MAX_ROWS`, `stale_data`, …); absent when there are none.",
    schema: { type: 'string' },
  },
};

const RESPONSES = {
  '406': 'NotAcceptable',
  '422': 'QueryUnprocessable',
  '429': 'QueryRefused',
  '503': 'QueryUnavailable',
} as const;

export function queryRoutes(deps: AnalyticsDeps): Route[] {
  // One schema object for every form: compiled once, published alike.
  const querySchema = queryBodySchema(deps.maxRows, deps.zones);
  const inUrlSchema = queryInUrlSchema(querySchema);
  const fromUrl = ({ query }: { query: Record<string, unknown> }) => ({
    query: () => readQ(querySchema, query.q),
  });
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
      responses: RESPONSES,
      async handle({ body, ctx }) {
        jsonOnly(ctx.headers.accept, '/api/v1/query');
        // A POST answer has no entity tag: nothing revalidates it.
        return { body: await answer(deps, body, ctx) };
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
      query: inUrlSchema,
      checks: fromUrl,
      successStatus: 200,
      response: queryResponse,
      responses: RESPONSES,
      etag: 'read',
      cacheControl: 'private, no-cache',
      async handle({ checked, ctx }) {
        jsonOnly(ctx.headers.accept, '/api/v1/query');
        // Checked before the handler runs: a request without a readable `q` never gets here.
        const body = checked.query as QueryRequest;
        const result = await answer(deps, body, ctx).catch((error: unknown) => {
          throw inUrl(error);
        });
        return { body: result, headers: { ETag: answerEtag(result) } };
      },
    }),
    // Several queries in one round trip (a dashboard's panels), each answered as /query would.
    defineRoute<unknown, unknown, BatchRequest>({
      method: 'post',
      path: BATCH_PATH,
      operationId: 'runQueryBatch',
      summary: 'Run up to 20 analytics queries at once',
      tags: ['analytics'],
      scope: 'analytics:read',
      body: queryBatchBody(querySchema),
      cost: (body) => body.queries.length,
      successStatus: 200,
      response: queryBatchResponse,
      responses: RESPONSES,
      async handle({ body, ctx }) {
        jsonOnly(ctx.headers.accept, BATCH_PATH);
        return { body: { data: await answerBatch(deps, querySchema, body.queries, ctx) } };
      },
    }),
    defineRoute<unknown, unknown, QueryRequest>({
      method: 'post',
      path: '/api/v1/query/export',
      operationId: 'exportQuery',
      summary: "Export an analytics query's rows as CSV or NDJSON",
      tags: ['analytics'],
      scope: 'analytics:read',
      body: querySchema,
      successStatus: 200,
      files: FILES,
      successHeaders: FILE_HEADERS,
      responses: RESPONSES,
      async handle({ body, ctx }) {
        return exported(deps, body, ctx);
      },
    }),
    defineRoute<unknown, { q: string }, unknown, { query: QueryRequest | undefined }>({
      method: 'get',
      path: '/api/v1/query/export',
      operationId: 'getQueryExport',
      summary: 'Export the rows of an analytics query given in the URL',
      tags: ['analytics'],
      scope: 'analytics:read',
      query: inUrlSchema,
      checks: fromUrl,
      successStatus: 200,
      files: FILES,
      successHeaders: FILE_HEADERS,
      responses: RESPONSES,
      async handle({ checked, ctx }) {
        const body = checked.query as QueryRequest;
        return exported(deps, body, ctx).catch((error: unknown) => {
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
    forecastRoute(deps),
  ];
}
