import type { Transaction } from 'kysely';
import type { Database } from '../storage/database.ts';
import { postgresTransactor } from '../storage/postgres-transactor.ts';
import type { TaskDeps } from './task.service.ts';

/**
 * Runs task writes outside an HTTP request (demo data, the CLI, tests) the way a request does:
 * in one unit of work, the projector woken once it commits.
 */
export function inTaskUnit<T>(
  deps: Pick<TaskDeps, 'db' | 'wakeProjector'>,
  work: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  return postgresTransactor(deps.db)(async (uow) => {
    const result = await work(uow.trx);
    uow.afterCommit(deps.wakeProjector);
    return result;
  });
}
