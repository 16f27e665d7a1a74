export type Scope =
  | 'workflows:read'
  | 'workflows:write'
  | 'workflows:execute'
  | 'analytics:read'
  | 'analytics:write';

export const SCOPES: readonly Scope[] = [
  'workflows:read',
  'workflows:write',
  'workflows:execute',
  'analytics:read',
  'analytics:write',
];

declare module '../http/route.ts' {
  interface KernelTypes {
    principal: Principal;
    /**
     * A token scope; 'token' for any API token whatever its scopes; 'master' for the master key;
     * 'reader' for a token with `analytics:read` or the master key (a scrape of views).
     */
    scope: Scope | 'token' | 'master' | 'reader';
  }
}

export type TokenKind = 'user' | 'service_account';

/** Who is calling. Every request has one, decided once by the auth middleware. */
export type Principal =
  | { kind: 'anonymous' }
  /** A bearer credential was sent but is unknown, expired or revoked. */
  | { kind: 'invalid'; reason: string }
  | { kind: 'master' }
  | {
      kind: 'token';
      id: string;
      tokenKind: TokenKind;
      scopes: readonly Scope[];
      businesses: readonly string[];
    };

/** Whether the caller showed a valid credential: an API token or the master key. */
export function holdsCredential(principal: Principal): boolean {
  return principal.kind === 'token' || principal.kind === 'master';
}

/** The businesses a principal may read or write; null means any (only the master key). */
export function allowedBusinesses(principal: Principal): readonly string[] | null {
  if (principal.kind === 'token') return principal.businesses;
  if (principal.kind === 'master') return null;
  return [];
}

export function mayAccessBusiness(principal: Principal, business: string): boolean {
  const allowed = allowedBusinesses(principal);
  return allowed === null || allowed.includes(business);
}
