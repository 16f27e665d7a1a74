import type { Send, Statement, Wire } from './postgres-send.ts';

/**
 * Holds a transaction's BEGIN back and sends it with the transaction's first statement, in one
 * write: one round trip less for every write transaction. Its answer carries nothing, so BEGIN is
 * answered at once; and still nothing commits unless a COMMIT follows the statement's answer (a
 * connection dropped before that rolls the whole transaction back).
 *
 * Needs a pipelined pg client (`pipeline: true`): otherwise pg waits for BEGIN's answer before it
 * writes the statement, and the two go out apart however they were queued.
 */
export function withBeginCoalescing(next: Send, wire: () => Wire): Send {
  /** A transaction's BEGIN not sent yet. */
  let held: Statement | undefined;
  return (statement) => {
    if (isBegin(statement)) {
      held = statement;
      return Promise.resolve(BEGUN);
    }
    const begin = held;
    if (begin === undefined) return next(statement);
    held = undefined;
    const stream = wire();
    stream.cork();
    let begun: Promise<unknown>;
    let result: Promise<unknown>;
    try {
      begun = next(begin);
      result = next(statement);
    } finally {
      stream.uncork();
    }
    // A BEGIN that failed explains the statement's failure: report it, not what followed.
    return begun.then(
      () => result,
      (error: unknown) => {
        result.catch(() => {});
        throw error;
      },
    );
  };
}

/** A transaction's opening statement, as Kysely sends it (`begin`, or with an isolation level). */
const isBegin = (statement: Statement): boolean =>
  typeof statement[0] === 'string' &&
  /^(?:begin|start transaction\b[\w ]*)$/i.test(statement[0]) &&
  (statement[1] === undefined || (Array.isArray(statement[1]) && statement[1].length === 0)) &&
  statement.length <= 2;

const BEGUN = { command: 'BEGIN', rowCount: null, rows: [], fields: [] };
