import { AppError } from '../http/errors.ts';

/** Seconds a client is asked to wait before retrying after Postgres was unreachable. */
export const POSTGRES_RETRY_AFTER_SECONDS = 2;

// SQLSTATE classes and codes (https://www.postgresql.org/docs/current/errcodes-appendix.html).
const UNAVAILABLE_CODES = new Set([
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, recovering)
  '53300', // too_many_connections
  '40001', // serialization_failure: worth a retry
  '40P01', // deadlock_detected: likewise
]);
const TIMEOUT_CODES = new Set([
  '57014', // query_canceled, which statement_timeout raises
  '25P03', // idle_in_transaction_session_timeout
  '55P03', // lock_not_available (lock_timeout)
]);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
// pg and pg-pool raise these as plain Errors without a code.
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'not queryable',
  'Client was closed',
  'Cannot use a pool after calling end',
];
const TIMEOUT_MESSAGES = ['Query read timeout'];

/**
 * Engine failures a client should hear about as such: a lost or refused connection is a 503
 * with Retry-After (the request did nothing, or nothing that will commit), a statement that ran
 * out of time a 504. Anything else stays unknown and becomes a 500 that reveals nothing.
 */
export function classifyPostgresError(error: unknown): AppError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  const sqlstate = typeof code === 'string' ? code : '';
  if (TIMEOUT_CODES.has(sqlstate) || TIMEOUT_MESSAGES.some((m) => text.includes(m))) {
    return new AppError(
      'timeout',
      'The database did not answer in time; nothing was changed unless a retry says so. Retry with the same Idempotency-Key.',
    );
  }
  if (
    UNAVAILABLE_CODES.has(sqlstate) ||
    sqlstate.startsWith('08') ||
    NETWORK_CODES.has(sqlstate) ||
    UNAVAILABLE_MESSAGES.some((m) => text.includes(m))
  ) {
    return new AppError('unavailable', 'The database is unavailable; retry shortly.', {
      headers: { 'Retry-After': String(POSTGRES_RETRY_AFTER_SECONDS) },
    });
  }
  return undefined;
}
