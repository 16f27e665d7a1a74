import { AppError } from '../http/errors.ts';

/** What an engine ran out of, or could not write to: each is its own 503 problem. */
export type StorageFault = 'storage_full' | 'storage_read_only' | 'out_of_memory';

/**
 * Seconds a client is asked to wait. Full or read-only storage waits on an operator (space
 * freed, a failover finished), so retrying sooner only adds load; memory comes back by itself.
 */
export const STORAGE_FAULT_RETRY_AFTER_SECONDS: Record<StorageFault, number> = {
  storage_full: 30,
  storage_read_only: 30,
  out_of_memory: 5,
};

const DETAILS: Record<StorageFault, (engine: string) => string> = {
  storage_full: (engine) =>
    `The ${engine} has no space left to write; nothing was changed. Retry once space is freed, with the same Idempotency-Key.`,
  storage_read_only: (engine) =>
    `The ${engine} accepts no writes right now (its storage is read-only); nothing was changed. Retry later, with the same Idempotency-Key.`,
  out_of_memory: (engine) =>
    `The ${engine} ran out of memory; nothing was changed. Retry shortly, with the same Idempotency-Key.`,
};

/** The problem a client hears for `fault`: it names the fault, never the file or statement. */
export function storageFaultError(fault: StorageFault, engine: string): AppError {
  return new AppError(fault, DETAILS[fault](engine), {
    headers: { 'Retry-After': String(STORAGE_FAULT_RETRY_AFTER_SECONDS[fault]) },
  });
}

export function isStorageFault(code: string): code is StorageFault {
  return Object.hasOwn(STORAGE_FAULT_RETRY_AFTER_SECONDS, code);
}

// Node's errno names, and the numbers PGlite's Emscripten file system raises as `ErrnoError`.
const ERRNO_FAULTS: Record<string, StorageFault> = {
  ENOSPC: 'storage_full',
  EDQUOT: 'storage_full',
  EROFS: 'storage_read_only',
  ENOMEM: 'out_of_memory',
};
const EMSCRIPTEN_ERRNO_FAULTS: Record<number, StorageFault> = {
  51: 'storage_full', // ENOSPC
  69: 'storage_read_only', // EROFS
  48: 'out_of_memory', // ENOMEM
};

/** A file-system failure raised in JavaScript (Node's fs, PGlite's in-process file system). */
export function errnoFault(error: object): StorageFault | undefined {
  const { code, name, errno } = error as { code?: unknown; name?: unknown; errno?: unknown };
  if (typeof code === 'string' && Object.hasOwn(ERRNO_FAULTS, code)) return ERRNO_FAULTS[code];
  if (name === 'ErrnoError' && typeof errno === 'number') return EMSCRIPTEN_ERRNO_FAULTS[errno];
  return undefined;
}
