import { AppError } from '../http/errors.ts';
import type { Route } from '../http/route.ts';
import type { Principal } from './principal.ts';

const challenge = (principal: Principal): Record<string, string> => ({
  'WWW-Authenticate':
    principal.kind === 'invalid'
      ? 'Bearer realm="cairn", error="invalid_token"'
      : 'Bearer realm="cairn"',
});

/** Deny by default: a route is reachable only with exactly what its declaration asks for. */
export function authorize(route: Pick<Route, 'scope'>, principal: Principal): void {
  if (route.scope === null) return;
  if (principal.kind === 'anonymous' || principal.kind === 'invalid') {
    throw new AppError(
      'unauthorized',
      principal.kind === 'invalid' ? principal.reason : 'This operation needs a bearer token.',
      { headers: challenge(principal) },
    );
  }
  if (route.scope === 'master') {
    if (principal.kind === 'master') return;
    throw new AppError('forbidden', 'Only the master key may do this (tokens, erasures).', {
      members: { required: 'master_key' },
    });
  }
  if (route.scope === 'reader') {
    if (principal.kind === 'master') return;
    if (principal.scopes.includes('analytics:read')) return;
    throw new AppError('forbidden', 'This operation needs the analytics:read scope.', {
      members: { required_scope: 'analytics:read' },
    });
  }
  if (route.scope === 'token') {
    if (principal.kind === 'token') return;
    throw new AppError(
      'forbidden',
      'The master key is not an API token: it can issue, list and revoke tokens only.',
      { members: { required: 'token' } },
    );
  }
  if (principal.kind === 'master') {
    throw new AppError(
      'forbidden',
      'The master key is accepted only by the token and erasure endpoints.',
      {
        members: { required_scope: route.scope },
      },
    );
  }
  if (!principal.scopes.includes(route.scope)) {
    throw new AppError('forbidden', `This operation needs the ${route.scope} scope.`, {
      members: { required_scope: route.scope },
    });
  }
}
