import type { Kysely } from 'kysely';
import { answerEtag } from '../analytics/answer-etag.ts';
import { queryContext } from '../analytics/caller-context.ts';
import type { QueryRequest } from '../analytics/parse/query-parser.ts';
import type { AnalyticsDeps } from '../analytics/query.service.ts';
import { queryResponse } from '../analytics/query-response.schemas.ts';
import { pageOfList, single } from '../http/envelope.ts';
import { defineRoute, type RequestContext, type Route } from '../http/route.ts';
import type { JsonSchema } from '../http/validation.ts';
import type { Database } from '../storage/database.ts';
import { deleteView, findView, insertView, listViewPage, updateView } from './view.repository.ts';
import {
  viewBody,
  viewIdParams,
  viewListQuery,
  viewListResponse,
  viewResponse,
} from './view.schemas.ts';
import {
  answerView,
  checkGaugeSeries,
  checkViewQuery,
  generateViewId,
  toViewView,
  type ViewInput,
  viewBusinesses,
  visibleView,
} from './view.service.ts';

export interface ViewDeps {
  db: Kysely<Database>;
  now: () => Date;
  analytics: AnalyticsDeps;
  /** `/query`'s body schema, the one object every form of the query is checked by. */
  querySchema: JsonSchema;
  /** `/metrics/views`: how many series at most, and how often a view is answered for it. */
  gauges: { maxSeries: number; intervalMs: number };
}

const ANSWER_RESPONSES = {
  '422': 'QueryUnprocessable',
  '429': 'QueryRefused',
  '503': 'QueryUnavailable',
} as const;

/** Saved queries: kept in Postgres, answered now through `/query`'s own path. */
export function viewRoutes(deps: ViewDeps): Route[] {
  const body = viewBody(deps.querySchema);
  /** The query `/query` would take, and for a gauge view, an answer the scrape can serve whole. */
  const checkGauge = async (input: ViewInput, ctx: RequestContext): Promise<void> => {
    checkViewQuery(deps.analytics, input.query);
    if (!input.prometheus) return;
    const caller = queryContext(ctx);
    await checkGaugeSeries(
      deps.analytics,
      input.query,
      viewBusinesses(ctx.principal, input.query),
      { signal: ctx.signal, principal: caller.principal ?? 'anonymous' },
      deps.gauges.maxSeries,
    );
  };
  return [
    defineRoute<unknown, unknown, ViewInput>({
      method: 'post',
      path: '/api/v1/views',
      operationId: 'createView',
      summary: 'Save a query as a view',
      tags: ['views'],
      scope: 'analytics:write',
      body,
      successStatus: 201,
      response: viewResponse,
      write: true,
      before: ({ body, ctx }) => checkGauge(body, ctx),
      async handle({ body, ctx, uow }) {
        const row = await insertView(uow.trx, {
          id: generateViewId(),
          name: body.name,
          query: body.query as unknown as Record<string, unknown>,
          businesses: viewBusinesses(ctx.principal, body.query),
          prometheus: body.prometheus ?? false,
          at: deps.now(),
        });
        return { body: single(toViewView(row), ctx.requestId) };
      },
    }),
    defineRoute<unknown, { page: number; per_page: number }, unknown>({
      method: 'get',
      path: '/api/v1/views',
      operationId: 'listViews',
      summary: "List the views of the token's businesses, oldest first",
      tags: ['views'],
      scope: 'analytics:read',
      query: viewListQuery,
      successStatus: 200,
      response: viewListResponse,
      async handle({ query, ctx }) {
        const { page, per_page } = query;
        const { rows, total } = await listViewPage(deps.db, queryContext(ctx).businesses, {
          limit: per_page,
          offset: (page - 1) * per_page,
        });
        return { body: pageOfList(rows.map(toViewView), ctx.requestId, { total, page, per_page }) };
      },
    }),
    defineRoute<{ id: string }, unknown, unknown>({
      method: 'get',
      path: '/api/v1/views/:id',
      operationId: 'getView',
      summary: 'A view',
      tags: ['views'],
      scope: 'analytics:read',
      params: viewIdParams,
      successStatus: 200,
      response: viewResponse,
      async handle({ params, ctx }) {
        const row = visibleView(await findView(deps.db, params.id), ctx.principal, params.id);
        return { body: single(toViewView(row), ctx.requestId) };
      },
    }),
    defineRoute<{ id: string }, unknown, ViewInput>({
      method: 'put',
      path: '/api/v1/views/:id',
      operationId: 'replaceView',
      summary: "Replace a view's name, query and flags",
      tags: ['views'],
      scope: 'analytics:write',
      params: viewIdParams,
      body,
      successStatus: 200,
      response: viewResponse,
      write: true,
      before: ({ body, ctx }) => checkGauge(body, ctx),
      async handle({ params, body, ctx, uow }) {
        visibleView(await findView(uow.trx, params.id), ctx.principal, params.id);
        const row = await updateView(uow.trx, params.id, {
          name: body.name,
          query: body.query as unknown as Record<string, unknown>,
          businesses: viewBusinesses(ctx.principal, body.query),
          prometheus: body.prometheus ?? false,
          at: deps.now(),
        });
        const updated = visibleView(row, ctx.principal, params.id);
        return { body: single(toViewView(updated), ctx.requestId) };
      },
    }),
    defineRoute<{ id: string }, unknown, unknown>({
      method: 'delete',
      path: '/api/v1/views/:id',
      operationId: 'deleteView',
      summary: 'Delete a view and its embeds',
      tags: ['views'],
      scope: 'analytics:write',
      params: viewIdParams,
      successStatus: 204,
      write: true,
      async handle({ params, ctx, uow }) {
        visibleView(await findView(uow.trx, params.id), ctx.principal, params.id);
        await deleteView(uow.trx, params.id);
        return {};
      },
    }),
    // The GET form of /query for a saved query: same cache, coalescing, admission and ETag.
    defineRoute<{ id: string }, unknown, unknown>({
      method: 'get',
      path: '/api/v1/views/:id/answer',
      operationId: 'getViewAnswer',
      summary: "A view's query answered now, as /query answers it",
      tags: ['views'],
      scope: 'analytics:read',
      params: viewIdParams,
      successStatus: 200,
      response: queryResponse,
      responses: ANSWER_RESPONSES,
      etag: 'read',
      cacheControl: 'private, no-cache',
      async handle({ params, ctx }) {
        const row = visibleView(await findView(deps.db, params.id), ctx.principal, params.id);
        const caller = queryContext(ctx);
        const result = await answerView(deps.analytics, row, row.query as unknown as QueryRequest, {
          signal: ctx.signal,
          principal: caller.principal ?? 'anonymous',
          useCache: caller.useCache ?? true,
        });
        return { body: result, headers: { ETag: answerEtag(result) } };
      },
    }),
  ];
}
