import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../http/errors.ts';
import { embedCaller } from './embed-caller.ts';
import {
  RATE_WINDOW_SECONDS,
  type RateCaller,
  type RateDecision,
  type RateLimiter,
} from './rate-limit.ts';
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
  // Express works the address out anew on each read of req.ip; a token's budget needs none.
  const addressOf = (req: Request) => () => req.ip ?? req.socket.remoteAddress ?? 'unknown';
  /** An embed's page and answers are charged to the embed token, whoever fetches them. */
  const callerOf = (req: Request): RateCaller => embedCaller(req.path) ?? req.principal;
  const charge = async (
    req: Request,
    res: Response,
    caller: RateCaller = callerOf(req),
  ): Promise<RateDecision> => {
    const address = addressOf(req);
    const decision = isUncharged(req.path)
      ? await limiter.peek(caller, address)
      : await limiter.consume(caller, address);
    return report(res, decision);
  };
  const report = (res: Response, decision: RateDecision): RateDecision => {
    res.setHeader('X-RateLimit-Limit', String(decision.limit));
    res.setHeader('X-RateLimit-Remaining', String(decision.remaining));
    res.setHeader('X-RateLimit-Reset', String(decision.resetAt));
    // The same budget in the IETF fields (draft-ietf-httpapi-ratelimit-headers): quota and
    // window in the policy; remaining and seconds until the window resets in the state.
    res.setHeader('RateLimit-Policy', `"default";q=${decision.limit};w=${RATE_WINDOW_SECONDS}`);
    res.setHeader('RateLimit', `"default";r=${decision.remaining};t=${decision.retryAfter}`);
    return decision;
  };

  const refused = (decision: RateDecision, detail: string): AppError => {
    onReject();
    return new AppError('rate_limited', `${detail}; retry in ${decision.retryAfter} s.`, {
      headers: { 'Retry-After': String(decision.retryAfter) },
    });
  };

  /**
   * On an embed path: its token is its caller, so made-up tokens would each get a fresh budget: a
   * token the service refuses (401) is charged to the address too, at the anonymous rate, and
   * an address that has spent that budget is refused before its token is looked up.
   */
  const guessing = async (req: Request, res: Response): Promise<RateDecision | undefined> => {
    const address = addressOf(req);
    res.once('finish', () => {
      if (res.statusCode === 401) limiter.consume(undefined, address).catch(() => {});
    });
    const byAddress = await limiter.peek(undefined, address);
    return byAddress.remaining > 0 ? undefined : report(res, byAddress);
  };

  const limit = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      const embed = embedCaller(req.path);
      const spent = embed && (await guessing(req, res));
      if (spent) {
        next(refused(spent, 'Too many refused embed tokens from this address'));
        return;
      }
      const decision = await charge(req, res, embed ?? req.principal);
      if (decision.allowed) {
        next();
        return;
      }
      next(refused(decision, `Rate limit of ${decision.limit} requests per minute exceeded`));
    } catch (error) {
      next(error);
    }
  };

  /**
   * Charges `units` more to a request already charged one, once its body shows it counts as
   * several (a batch of N queries: N − 1 more). One that does not fit the budget left is
   * refused whole and given those units back: a batch too big for the minute does not also
   * spend what a smaller one could have used. The headers then show the budget after it.
   */
  const chargeMore = async (req: Request, res: Response, units: number): Promise<void> => {
    const address = addressOf(req);
    const decision = report(res, await limiter.consume(callerOf(req), address, units));
    if (decision.allowed) return;
    const after = report(res, await limiter.refund(callerOf(req), address, units));
    throw refused(
      after,
      `This request counts as ${units + 1} requests, more than the ${after.remaining + 1} left of the rate limit of ${after.limit} per minute`,
    );
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

  return { limit, afterAuthFailure, chargeMore };
}
