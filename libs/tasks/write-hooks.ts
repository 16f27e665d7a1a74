import type { BeforeCommit } from '../platform/route.ts';

/**
 * Options every write use case takes. `beforeCommit` runs inside the write's transaction right
 * before it commits, with the write's result, so the idempotency layer stores its response
 * atomically with the write; throwing from it rolls the write back.
 */
export interface WriteOptions<R> {
  beforeCommit?: BeforeCommit<R> | undefined;
}
