import type { NextFunction, Request, Response } from 'express';
import type { Kysely } from 'kysely';
import type { Database } from '../storage/database.ts';
import type { Principal } from './principal.ts';
import { authenticate } from './token.service.ts';
import type { TokenCache } from './token-cache.ts';

declare global {
  namespace Express {
    interface Request {
      principal: Principal;
    }
  }
}

/** Decides who is calling; whether that is enough is each route's declaration's business. */
export function authMiddleware(deps: {
  db: Kysely<Database>;
  /** The master key, or during a rotation the new and the previous one. */
  masterKey: string | readonly string[] | undefined;
  now: () => Date;
  tokenCache?: TokenCache;
}) {
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    try {
      req.principal = await authenticate(
        deps.db,
        req.headers.authorization,
        deps.masterKey,
        deps.now(),
        deps.tokenCache,
      );
      next();
    } catch (error) {
      next(error);
    }
  };
}
