import { TraceFlags, trace } from '@opentelemetry/api';
import type { Response } from 'express';
import { AppError, ERROR_CODES, type ValidationIssue } from './errors.ts';

// A URN names the problem type without promising a web page behind it.
const TYPE_BASE = 'urn:cairn:problem:';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  request_id: string;
  trace_id?: string;
  errors?: Array<{ field: string; code: string; message: string }>;
  [member: string]: unknown;
}

export function toProblem(error: AppError, instance: string, requestId: string): Problem {
  const { title, status } = ERROR_CODES[error.code];
  return {
    type: `${TYPE_BASE}${error.code.replace(/_/g, '-')}`,
    title,
    status,
    detail: error.detail,
    instance,
    request_id: requestId,
    ...sampledTrace(),
    ...(error.extra.errors ? { errors: error.extra.errors } : {}),
    ...error.extra.members,
  };
}

/**
 * The request's trace, so a caller reporting a problem hands over the way to its trace. Only a
 * sampled one: an unsampled id leads nowhere. Without a tracing SDK there is no active span.
 */
function sampledTrace(): { trace_id?: string } {
  const ids = trace.getActiveSpan()?.spanContext();
  return ids && ids.traceFlags & TraceFlags.SAMPLED ? { trace_id: ids.traceId } : {};
}

/** RFC 9457 reserves `detail` for a string, so the seed's array-shaped 422 is plain JSON. */
export function sendValidation(res: Response, issues: ValidationIssue[]): void {
  res.status(422).type('application/json').json({ detail: issues });
}

export function sendProblem(
  res: Response,
  error: AppError,
  instance: string,
  requestId: string,
): void {
  for (const [name, value] of Object.entries(error.extra.headers ?? {})) res.setHeader(name, value);
  res
    .status(error.status)
    .type('application/problem+json')
    .send(JSON.stringify(toProblem(error, instance, requestId)));
}

export { AppError };
