/**
 * One write request's transaction, opened by the router around a handler declared
 * `write: true` (Kysely's example controller: `db.transaction().execute(trx => useCase(trx))`).
 * The kernel's contract, independent of any store; `storage/postgres-transactor.ts` opens
 * units on Postgres.
 */
export interface UnitOfWork<Tx> {
  /** The transaction every statement of the write runs in. */
  readonly trx: Tx;
  /** Runs `effect` once the unit has committed (wake a worker, clear a cache); never on rollback. */
  afterCommit(effect: () => void): void;
}

/** Opens a unit of work, runs `work` in it and commits; a throw rolls everything back. */
export type Transactor<Tx> = <T>(work: (uow: UnitOfWork<Tx>) => Promise<T>) => Promise<T>;

/** Runs `work` in a unit from `begin`, then the effects registered on it, in order. */
export async function runUnit<Tx, T>(
  begin: <R>(body: (trx: Tx) => Promise<R>) => Promise<R>,
  work: (uow: UnitOfWork<Tx>) => Promise<T>,
): Promise<T> {
  const effects: Array<() => void> = [];
  const result = await begin((trx) => work({ trx, afterCommit: (effect) => effects.push(effect) }));
  for (const effect of effects) effect();
  return result;
}

/** The unit handed to routes that do not write: touching it is a bug, so it says so. */
export const NO_UNIT: UnitOfWork<never> = {
  get trx(): never {
    throw new Error('This route is not declared `write: true`, so it has no unit of work.');
  },
  afterCommit() {
    throw new Error('This route is not declared `write: true`, so it has no unit of work.');
  },
};
