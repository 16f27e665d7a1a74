import type { Kysely, Transaction } from 'kysely';
import { runUnit, type Transactor, type UnitOfWork } from '../http/unit-of-work.ts';
import type { Database } from './database.ts';

declare module '../http/route.ts' {
  interface KernelTypes {
    transaction: Transaction<Database>;
  }
}

/** A write request's unit of work on Postgres. */
export type Work = UnitOfWork<Transaction<Database>>;

/**
 * Units of work as Postgres transactions: what the router opens around each write. The kernel's
 * `http/unit-of-work.ts` defines what a unit of work is for any store; this is its Postgres
 * implementation.
 */
export function postgresTransactor(db: Kysely<Database>): Transactor<Transaction<Database>> {
  return (work) => runUnit((body) => db.transaction().execute(body), work);
}
