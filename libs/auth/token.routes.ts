import type { Kysely } from 'kysely';
import { pageOfList, single } from '../http/envelope.ts';
import { AppError } from '../http/errors.ts';
import { defineRoute, type Route } from '../http/route.ts';
import type { Database } from '../storage/database.ts';
import type { Principal } from './principal.ts';
import { findTokenById, listTokenPage, revokeToken } from './token.repository.ts';
import {
  createTokenBody,
  issuedTokenResponse,
  ownTokenResponse,
  tokenIdParams,
  tokenListQuery,
  tokenListResponse,
} from './token.schemas.ts';
import { issueToken, type NewTokenInput, toListedToken, toTokenView } from './token.service.ts';

/** A token's rate-limit tier as `GET /tokens/self` shows it. */
export interface RateLimitView {
  tier: 'user' | 'service_account';
  limit: number;
  window_seconds: number;
}

export function tokenRoutes(deps: {
  db: Kysely<Database>;
  now: () => Date;
  /** The budget the rate limiter charges a token against (rate limits sit above auth). */
  rateLimitOf: (principal: Principal) => RateLimitView;
  /** Told right after a revocation commits: this instance forgets it without waiting to hear it. */
  revoked?: () => void;
}): Route[] {
  return [
    defineRoute<unknown, unknown, NewTokenInput>({
      method: 'post',
      path: '/api/v1/tokens',
      operationId: 'createToken',
      summary: 'Issue an API token (master key only); the token is shown only in this response',
      tags: ['tokens'],
      scope: 'master',
      body: createTokenBody,
      successStatus: 201,
      response: issuedTokenResponse,
      write: true,
      async handle({ body, ctx, uow }) {
        return { body: single(await issueToken(uow.trx, body, deps.now()), ctx.requestId) };
      },
    }),
    defineRoute<unknown, { page: number; per_page: number }, unknown>({
      method: 'get',
      path: '/api/v1/tokens',
      operationId: 'listTokens',
      summary: 'List API tokens, oldest first, never their secrets (master key only)',
      tags: ['tokens'],
      scope: 'master',
      query: tokenListQuery,
      successStatus: 200,
      response: tokenListResponse,
      async handle({ query, ctx }) {
        const { page, per_page } = query;
        const { rows, total } = await listTokenPage(deps.db, {
          limit: per_page,
          offset: (page - 1) * per_page,
        });
        const now = deps.now();
        return {
          body: pageOfList(
            rows.map((row) => toListedToken(row, now)),
            ctx.requestId,
            { total, page, per_page },
          ),
        };
      },
    }),
    defineRoute<unknown, unknown, unknown>({
      method: 'get',
      path: '/api/v1/tokens/self',
      operationId: 'getOwnToken',
      summary: 'The calling token: its name, scopes, businesses, kind, expiry and rate limit',
      tags: ['tokens'],
      scope: 'token',
      successStatus: 200,
      response: ownTokenResponse,
      async handle({ ctx }) {
        const { principal } = ctx;
        // Authorisation admitted a token; the row can only be gone if deleted meanwhile.
        const row = principal.kind === 'token' ? await findTokenById(deps.db, principal.id) : null;
        if (!row) throw new AppError('unauthorized', 'The token is not recognised.');
        return {
          body: single(
            { ...toTokenView(row), rate_limit: deps.rateLimitOf(principal) },
            ctx.requestId,
          ),
        };
      },
    }),
    defineRoute<{ id: string }, unknown, unknown>({
      method: 'delete',
      path: '/api/v1/tokens/:id',
      operationId: 'revokeToken',
      summary: 'Revoke an API token at once (master key only)',
      tags: ['tokens'],
      scope: 'master',
      params: tokenIdParams,
      successStatus: 204,
      write: true,
      async handle({ params, uow }) {
        if (!(await revokeToken(uow.trx, params.id, deps.now()))) {
          throw new AppError(
            'not_found',
            `Token ${params.id} does not exist or is already revoked.`,
          );
        }
        const { revoked } = deps;
        if (revoked) uow.afterCommit(revoked);
        return {};
      },
    }),
  ];
}
