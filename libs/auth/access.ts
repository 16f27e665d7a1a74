import { AppError } from '../http/errors.ts';
import { allowedBusinesses, mayAccessBusiness, type Principal } from './principal.ts';

// The one rule of tenancy, for every use case: whatever lies outside the caller's businesses is
// answered exactly like what does not exist (404), so a token learns nothing of other businesses.

/**
 * The same words whether `business` exists elsewhere or nowhere; the `businesses` member lists
 * what the token can read, which it may already know through `GET /api/v1/tokens/self`.
 */
const noBusiness = (business: string, readable: readonly string[]) =>
  new AppError('not_found', `No business '${business}' is readable with this token.`, {
    members: { businesses: [...readable] },
  });

/** Throws the 404 unless the principal may read and write `business`. */
export function requireBusiness(principal: Principal, business: string): void {
  if (!mayAccessBusiness(principal, business)) {
    throw noBusiness(business, allowedBusinesses(principal) ?? []);
  }
}

/**
 * The businesses a read covers: the one it names (a 404 when that one is out of reach), else
 * every business `allowed` holds; null means any (the master key).
 */
export function businessScope<Allowed extends readonly string[]>(
  allowed: Allowed | null,
  requested: string | null | undefined,
): Allowed | string[] | null {
  if (requested === null || requested === undefined) return allowed;
  if (allowed !== null && !allowed.includes(requested)) throw noBusiness(requested, allowed);
  return [requested];
}

/** `row` when it exists and lies in the principal's businesses; otherwise `what` is a 404. */
export function visibleOrNotFound<T extends { business: string }>(
  row: T | undefined,
  principal: Principal,
  what: string,
): T {
  if (!row || !mayAccessBusiness(principal, row.business)) {
    throw new AppError('not_found', `${what} does not exist.`);
  }
  return row;
}

/** Whether a business is visible to the principal, for checks over many rows at once. */
export const visibleBusiness = mayAccessBusiness;

export { allowedBusinesses };
