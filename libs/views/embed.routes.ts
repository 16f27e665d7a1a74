import { Readable } from 'node:stream';
import { answerEtag } from '../analytics/answer-etag.ts';
import type { QueryFilter, QueryRequest } from '../analytics/parse/query-parser.ts';
import { queryResponse } from '../analytics/query-response.schemas.ts';
import { single } from '../http/envelope.ts';
import { AppError } from '../http/errors.ts';
import { defineRoute, type Route } from '../http/route.ts';
import { type JsonSchema, validate } from '../http/validation.ts';
import {
  type EmbedInput,
  embedQuery,
  issueEmbed,
  openEmbed,
  toListedEmbed,
  viewerFilters,
} from './embed.service.ts';
import { embedPolicy } from './embed-policy.ts';
import { findView, listEmbeds, revokeEmbed } from './view.repository.ts';
import type { ViewDeps } from './view.routes.ts';
import {
  embedAnswerQuery,
  embedBody,
  embedIdParams,
  embedListResponse,
  embedPageQuery,
  embedTokenParams,
  issuedEmbedResponse,
  viewIdParams,
} from './view.schemas.ts';
import { answerView, checkLockedFilters, relocated, visibleView } from './view.service.ts';

export interface EmbedDeps extends ViewDeps {
  /** The chart page: fixed HTML that fetches `./answer` beside its own URL. */
  page: () => string;
}

const ANSWER_RESPONSES = {
  '401': 'EmbedUnauthorized',
  '403': 'EmbedForbidden',
  '422': 'QueryUnprocessable',
  '429': 'QueryRefused',
  '503': 'QueryUnavailable',
} as const;

/** Embeds of a view (managed with API tokens) and what an embed token opens (nothing else). */
export function embedRoutes(deps: EmbedDeps): Route[] {
  const filtersSchema = (deps.querySchema.properties as Record<string, JsonSchema>)
    .filters as JsonSchema;
  const viewerSchema: JsonSchema = {
    type: 'object',
    properties: { filters: filtersSchema },
  };
  return [
    defineRoute<{ id: string }, unknown, EmbedInput>({
      method: 'post',
      path: '/api/v1/views/:id/embeds',
      operationId: 'createViewEmbed',
      summary: 'Issue an embed token for a view; the token is shown only in this response',
      tags: ['views'],
      scope: 'analytics:write',
      params: viewIdParams,
      body: embedBody(filtersSchema),
      successStatus: 201,
      response: issuedEmbedResponse,
      write: true,
      async handle({ params, body, ctx, uow }) {
        // Filters that are not filters whatever the view: a 422 before any view is looked up.
        const locked = body.locked_filters ?? [];
        if (locked.length > 0) {
          const alone = { metrics: ['tasks_created'], filters: locked } as QueryRequest;
          checkLockedFilters(deps.analytics, deps.querySchema, alone, 0);
        }
        const view = visibleView(await findView(uow.trx, params.id), ctx.principal, params.id);
        // The locked filters must make a query /query would take, with the view's own.
        const own = (view.query as unknown as QueryRequest).filters?.length ?? 0;
        checkLockedFilters(
          deps.analytics,
          deps.querySchema,
          embedQuery(view, body.locked_filters ?? [], []),
          own,
        );
        return { body: single(await issueEmbed(uow.trx, view, body, deps.now()), ctx.requestId) };
      },
    }),
    defineRoute<{ id: string }, unknown, unknown>({
      method: 'get',
      path: '/api/v1/views/:id/embeds',
      operationId: 'listViewEmbeds',
      summary: "List a view's embeds, never their tokens",
      tags: ['views'],
      scope: 'analytics:read',
      params: viewIdParams,
      successStatus: 200,
      response: embedListResponse,
      async handle({ params, ctx }) {
        visibleView(await findView(deps.db, params.id), ctx.principal, params.id);
        const now = deps.now();
        const rows = await listEmbeds(deps.db, params.id);
        return {
          body: single(
            rows.map((row) => toListedEmbed(row, now)),
            ctx.requestId,
          ),
        };
      },
    }),
    defineRoute<{ id: string; embed_id: string }, unknown, unknown>({
      method: 'delete',
      path: '/api/v1/views/:id/embeds/:embed_id',
      operationId: 'revokeViewEmbed',
      summary: 'Revoke an embed token at once',
      tags: ['views'],
      scope: 'analytics:write',
      params: embedIdParams,
      successStatus: 204,
      write: true,
      async handle({ params, ctx, uow }) {
        visibleView(await findView(uow.trx, params.id), ctx.principal, params.id);
        if (!(await revokeEmbed(uow.trx, params.id, params.embed_id, deps.now()))) {
          throw new AppError(
            'not_found',
            `Embed ${params.embed_id} does not exist or is already revoked.`,
          );
        }
        return {};
      },
    }),
    defineRoute<{ embed_token: string }, { q?: string }, unknown>({
      method: 'get',
      path: '/embed/:embed_token',
      operationId: 'getEmbedPage',
      summary: "An embedded view's chart page (its embed token is the only credential)",
      tags: ['embeds'],
      scope: null,
      params: embedTokenParams,
      query: embedPageQuery,
      successStatus: 200,
      files: {
        'text/html': {
          type: 'string',
          description:
            "The chart and table of the answer; it fetches only `./answer` on this origin. `Content-Security-Policy` sets `frame-ancestors` to the embed's `allowed_origins` (none: `'none'`).",
        },
      },
      responses: { '401': 'EmbedUnauthorized' },
      async handle({ params }) {
        const { embed } = await openEmbed(deps.db, params.embed_token, deps.now());
        return {
          stream: Readable.from([deps.page()]),
          headers: {
            'Content-Type': 'text/html; charset=utf-8',
            'Content-Security-Policy': embedPolicy(embed.allowed_origins),
          },
        };
      },
    }),
    defineRoute<{ embed_token: string }, { q?: string }, unknown>({
      method: 'get',
      path: '/embed/:embed_token/answer',
      operationId: 'getEmbedAnswer',
      summary: "An embedded view's answer, its locked filters applied",
      tags: ['embeds'],
      scope: null,
      params: embedTokenParams,
      query: embedAnswerQuery,
      successStatus: 200,
      response: queryResponse,
      responses: ANSWER_RESPONSES,
      etag: 'read',
      cacheControl: 'private, no-cache',
      async handle({ params, query, ctx }) {
        const { embed, view } = await openEmbed(deps.db, params.embed_token, deps.now());
        const locked = embed.locked_filters as QueryFilter[];
        const extra = viewerFilters(query.q, viewerSchema, locked);
        const combined = embedQuery(view, locked, extra);
        try {
          // Together they are one query: /query's bounds (how many filters) hold for it too.
          validate(deps.querySchema, combined, 'body');
        } catch (error) {
          throw relocated(error, ['query', 'q']);
        }
        const result = await answerView(deps.analytics, view, combined, {
          signal: ctx.signal,
          principal: `embed:${embed.id}`,
          useCache: true,
        });
        return { body: result, headers: { ETag: answerEtag(result) } };
      },
    }),
  ];
}
