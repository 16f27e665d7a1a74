import type { Kysely } from 'kysely';
import { single } from '../platform/envelope.ts';
import { AppError } from '../platform/errors.ts';
import { defineRoute, type Route } from '../platform/route.ts';
import type { Database } from '../storage/database.ts';
import { revokeToken } from './token.repository.ts';
import { createTokenBody, tokenIdParams } from './token.schemas.ts';
import { type IssuedToken, issueToken, type NewTokenInput } from './token.service.ts';

export function tokenRoutes(deps: {
  db: Kysely<Database>;
  now: () => Date;
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
      async handle({ body, ctx }) {
        const respond = (issued: IssuedToken) => ({ body: single(issued, ctx.requestId) });
        const beforeCommit = ctx.recordResponse(respond);
        return respond(await issueToken(deps.db, body, deps.now(), { beforeCommit }));
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
      async handle({ params }) {
        if (!(await revokeToken(deps.db, params.id, deps.now()))) {
          throw new AppError(
            'not_found',
            `Token ${params.id} does not exist or is already revoked.`,
          );
        }
        deps.revoked?.();
        return {};
      },
    }),
  ];
}
