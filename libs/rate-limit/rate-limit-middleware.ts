import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../http/errors.ts';
import { RATE_WINDOW_SECONDS, type RateDecision, type RateLimiter } from './rate-limit.ts';
import { isUncharged } from './uncharged-paths.ts';

/**
 * Runs right after authentication, so the budget is the principal's, and before the body is
 * read, so a refused caller costs nothing more. Every response carries the X-RateLimit-*
 * headers, errors included, because they are set before anything else can answer.
 */
export function rateLimitMiddleware(
  limiter: RateLimiter,
  /** Told of every 429 (a metric). */
  onReject: () => void = () => {},
) {
  const charge = async (req: Request, res: Response): Promise<RateDecision> => {
    // Express works the address out anew on each read of req.ip; a token's budget needs none.
    const address = () => req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const decision = isUncharged(req.path)
      ? await limiter.peek(req.principal, address)
      : await limiter.consume(req.principal, address);
    res.setHeader('X-RateLimit-Limit', String(decision.limit));
    res.setHeader('X-RateLimit-Remaining', String(decision.remaining));
    res.setHeader('X-RateLimit-Reset', String(decision.resetAt));
    // The same budget in the IETF fields (draft-ietf-httpapi-ratelimit-headers): quota and
    // window in the policy; remaining and seconds until the window resets in the state.
    res.setHeader('RateLimit-Policy', `"default";q=${decision.limit};w=${RATE_WINDOW_SECONDS}`);
    res.setHeader('RateLimit', `"default";r=${decision.remaining};t=${decision.retryAfter}`);
    return decision;
  };

  const limit = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      const decision = await charge(req, res);
      if (decision.allowed) {
        next();
        return;
      }
      onReject();
      next(
        new AppError(
          'rate_limited',
          `Rate limit of ${decision.limit} requests per minute exceeded; retry in ${decision.retryAfter} s.`,
          { headers: { 'Retry-After': String(decision.retryAfter) } },
        ),
      );
    } catch (error) {
      next(error);
    }
  };

  /**
   * When authentication itself failed (its database is down), the caller is charged by
   * address so that the 500 still carries the headers; the original error goes on.
   */
  const afterAuthFailure = async (
    error: unknown,
    req: Request,
    res: Response,
    next: NextFunction,
  ): Promise<void> => {
    try {
      await charge(req, res);
    } catch {
      // The original failure is what the caller needs to hear about.
    }
    next(error);
  };

  return { limit, afterAuthFailure };
}
