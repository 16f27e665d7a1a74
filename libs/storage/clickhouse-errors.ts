import { AppError } from '../http/errors.ts';
import { type StorageFault, storageFaultError } from './storage-faults.ts';

// ClickHouse error names (`type`), as the HTTP client and chDB's copy of its error class carry them.
const TYPE_FAULTS: Record<string, StorageFault> = {
  NOT_ENOUGH_SPACE: 'storage_full',
  CANNOT_ALLOCATE_MEMORY: 'out_of_memory',
  TABLE_IS_READ_ONLY: 'storage_read_only',
};
// A write that failed in the file system keeps the OS's words (CANNOT_WRITE_TO_FILE_DESCRIPTOR,
// CANNOT_OPEN_FILE, … with `errno: 28` or `errno: 30`).
const MESSAGE_FAULTS: Array<[string, StorageFault]> = [
  ['No space left on device', 'storage_full'],
  ['Read-only file system', 'storage_read_only'],
];
// The whole server's (or user's) memory is gone: older servers say `Memory limit (total)
// exceeded`, newer ones `Global`/`User memory limit exceeded`. The per-query cap (`Memory limit
// (for query)`, `Query memory limit exceeded`) is a 422 that `query-execution.ts` answers, since
// the query itself asked too much.
const SERVER_MEMORY =
  /Memory limit \((total|for user)\) exceeded|(\(total\)|\b(Global|User|Total|Server)) memory limit exceeded/i;

/** Which storage fault a ClickHouse (or chDB) error is, if any. */
export function clickHouseStorageFault(error: unknown): StorageFault | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { type, message } = error as { type?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  if (typeof type === 'string' && Object.hasOwn(TYPE_FAULTS, type)) return TYPE_FAULTS[type];
  if (type === 'MEMORY_LIMIT_EXCEEDED' && SERVER_MEMORY.test(text)) return 'out_of_memory';
  if (typeof type !== 'string') return undefined;
  return MESSAGE_FAULTS.find(([words]) => text.includes(words))?.[1];
}

/**
 * The error middleware's translator for ClickHouse: storage faults as 503 problems; a statement
 * stopped at its time limit (an export's, which runs in 'throw' mode) as a 504.
 */
export function classifyClickHouseError(error: unknown): AppError | undefined {
  const fault = clickHouseStorageFault(error);
  if (fault) return storageFaultError(fault, 'analytics engine');
  if ((error as { type?: unknown } | null)?.type === 'TIMEOUT_EXCEEDED') {
    return new AppError(
      'timeout',
      'The analytics engine did not finish this request within its time limit. Narrow the period or the dimensions, or try again when the service is less busy.',
    );
  }
  return undefined;
}
