import { AppError } from '../http/errors.ts';
import { errnoFault, type StorageFault, storageFaultError } from './storage-faults.ts';

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
// Only real connection failures: the rest of class 08 (08P01 protocol_violation above all) is a
// statement Cairn should never send, and a 503 would tell the client to retry it forever.
const CONNECTION_CODES = new Set([
  '08000', // connection_exception
  '08003', // connection_does_not_exist
  '08006', // connection_failure
  '08001', // sqlclient_unable_to_establish_sqlconnection
  '08004', // sqlserver_rejected_establishment_of_sqlconnection
]);
const STORAGE_CODES: Record<string, StorageFault> = {
  '53100': 'storage_full', // disk_full
  '53200': 'out_of_memory', // out_of_memory
  '25006': 'storage_read_only', // read_only_sql_transaction: a hot standby, default_transaction_read_only
};
// Postgres reports EROFS as insufficient_privilege (errcode_for_file_access): only the message
// tells a read-only file system from a missing grant.
const READ_ONLY_FILE_SYSTEM = 'Read-only file system';
// A new session that cannot write its relation-cache file fails with this FATAL and no errno
// (SQLSTATE XX000): on a full disk every new pool connection does.
const INIT_FILE_UNWRITABLE = 'could not write init file';
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
// Raised by the erasure mark's trigger (sql/postgres/0013) on a write that raced the mark. The
// token already lost the business, but an instance may not have heard that yet: answer as the
// token will, rather than ask for a retry that can never succeed.
const ERASING_MESSAGE = 'business is being erased';

/**
 * Which storage fault a Postgres (or PGlite) error is, if any: disk full, out of memory, or
 * writes refused (a read-only transaction or file system).
 */
export function postgresStorageFault(error: unknown): StorageFault | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  const sqlstate = typeof code === 'string' ? code : '';
  if (Object.hasOwn(STORAGE_CODES, sqlstate)) return STORAGE_CODES[sqlstate];
  if (
    sqlstate === '42501' &&
    typeof message === 'string' &&
    message.includes(READ_ONLY_FILE_SYSTEM)
  ) {
    return 'storage_read_only';
  }
  if (typeof message === 'string' && message.includes(INIT_FILE_UNWRITABLE)) return 'storage_full';
  return errnoFault(error);
}

/**
 * Engine failures a client should hear about as such: a lost or refused connection is a 503
 * with Retry-After (the request did nothing, or nothing that will commit), full, read-only or
 * memory-starved storage a 503 that names it, a statement that ran out of time a 504. Anything
 * else stays unknown and becomes a 500 that reveals nothing (and is logged with its cause).
 */
export function classifyPostgresError(error: unknown): AppError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  const sqlstate = typeof code === 'string' ? code : '';
  const fault = postgresStorageFault(error);
  if (fault) return storageFaultError(fault, 'database');
  if (TIMEOUT_CODES.has(sqlstate) || TIMEOUT_MESSAGES.some((m) => text.includes(m))) {
    return new AppError(
      'timeout',
      'The database did not answer in time; nothing was changed unless a retry says so. Retry with the same Idempotency-Key.',
    );
  }
  if (sqlstate === '40001' && text.includes(ERASING_MESSAGE)) {
    return new AppError('not_found', 'The business is being erased: nothing of it can be written.');
  }
  if (
    UNAVAILABLE_CODES.has(sqlstate) ||
    CONNECTION_CODES.has(sqlstate) ||
    NETWORK_CODES.has(sqlstate) ||
    UNAVAILABLE_MESSAGES.some((m) => text.includes(m))
  ) {
    return new AppError('unavailable', 'The database is unavailable; retry shortly.', {
      headers: { 'Retry-After': String(POSTGRES_RETRY_AFTER_SECONDS) },
    });
  }
  return undefined;
}
