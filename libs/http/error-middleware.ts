import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { clientError } from './client-errors.ts';
import { AppError, ValidationError } from './errors.ts';
import { sendProblem, sendValidation } from './problem.ts';

/**
 * The one place a thrown value becomes a response: validation failures as the 422 body,
 * AppErrors as problem+json, and anything else as a 500 that reveals nothing.
 */
export function errorMiddleware(
  logger: Logger,
  /** Engine adapters' own classifiers (a lost database → 503), asked in turn. */
  translators: ReadonlyArray<(error: unknown) => AppError | undefined> = [],
) {
  return (error: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const instance = req.originalUrl.split('?')[0] ?? req.originalUrl;
    const requestId = req.requestId ?? '';
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (error instanceof ValidationError) {
      sendValidation(res, error.issues);
      return;
    }
    const known =
      error instanceof AppError
        ? error
        : (clientError(error) ??
          translators.reduce<AppError | undefined>(
            (found, translate) => found ?? translate(error),
            undefined,
          ));
    if (known) {
      sendProblem(res, known, instance, requestId);
      return;
    }
    // The route template, not the path: path segments can carry identifiers (a business
    // being erased, a task's gid), and a log outlives them.
    const route: unknown = req.route?.path;
    logger.error(
      { err: error, request_id: requestId, route: typeof route === 'string' ? route : 'unmatched' },
      'unhandled error',
    );
    sendProblem(
      res,
      new AppError('internal', 'The server failed to answer this request. It has been logged.'),
      instance,
      requestId,
    );
  };
}
