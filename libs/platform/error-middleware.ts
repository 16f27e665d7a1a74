import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { AppError, ValidationError } from './errors.ts';
import { sendProblem, sendValidation } from './problem.ts';

interface BodyParserError {
  type?: string;
  status?: number;
  limit?: number;
}

/**
 * The one place a thrown value becomes a response: validation failures as the 422 body,
 * AppErrors as problem+json, and anything else as a 500 that reveals nothing.
 */
export function errorMiddleware(logger: Logger) {
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
    const known = error instanceof AppError ? error : fromBodyParser(error as BodyParserError);
    if (known) {
      sendProblem(res, known, instance, requestId);
      return;
    }
    logger.error({ err: error, request_id: requestId, path: instance }, 'unhandled error');
    sendProblem(
      res,
      new AppError('internal', 'The server failed to answer this request. It has been logged.'),
      instance,
      requestId,
    );
  };
}

function fromBodyParser(error: BodyParserError): AppError | undefined {
  switch (error?.type) {
    case 'entity.parse.failed':
      return new AppError('bad_request', 'The request body is not valid JSON.');
    case 'entity.too.large':
      return new AppError(
        'payload_too_large',
        `The request body is larger than the ${error.limit ?? 1_048_576} bytes allowed.`,
      );
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('unsupported_media_type', 'The request body encoding is not supported.');
    case 'request.aborted':
      return new AppError('bad_request', 'The request body was not received in full.');
    default:
      return undefined;
  }
}
