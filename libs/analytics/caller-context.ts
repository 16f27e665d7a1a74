import { allowedBusinesses } from '../auth/principal.ts';
import type { RequestContext } from '../http/route.ts';
import type { QueryContext } from './query.service.ts';

/** `Cache-Control: no-cache` (or `no-store`) asks for an answer computed afresh. */
const bypassesCache = (header: string | undefined): boolean =>
  header !== undefined && /(^|,)\s*no-(cache|store)\s*(,|=|$)/i.test(header);

/** Who asks an analytics read, what they may read, and whether a cached answer will do. */
export function queryContext(ctx: RequestContext): QueryContext {
  const businesses = allowedBusinesses(ctx.principal);
  return {
    signal: ctx.signal,
    businesses: businesses === null ? null : [...businesses],
    principal: ctx.principal.kind === 'token' ? `token:${ctx.principal.id}` : 'master',
    useCache: !bypassesCache(ctx.headers['cache-control']),
  };
}
