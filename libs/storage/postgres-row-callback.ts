import pg from 'pg';
import type { Send } from './postgres-send.ts';

/**
 * The bottom of the stack: pg's own `query`, with a callback handed over with the statement
 * rather than pg's promise. pg's promise form (and its `query_timeout`) gives the Query its
 * callback after constructing it, and V8 then keeps every result's rows alive through
 * young-generation collections: about a quarter of what a page of dependents allocates was
 * promoted on Node 20, 22 and 24 (test/storage/pg-row-promotion.test.ts).
 *
 * Kysely sends text and values. A caller's own callback or Query object (a cursor) would go
 * around the layers above (the read deadline above all), so it is refused rather than left
 * unbounded.
 */
export function sendWithCallback(client: pg.Client): Send {
  // The prototype's query, not the client's: a client built on this stack overrides its own.
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  return (statement) => {
    if (statement.some((arg) => typeof arg === 'function') || isSubmittable(statement[0])) {
      return Promise.reject(
        new TypeError('Statements go through Kysely: text and values, no callback or cursor'),
      );
    }
    return new Promise((resolve, reject) => {
      query.call(client, ...statement, (error: Error | null, answer: unknown) => {
        if (error) reject(error);
        else resolve(answer);
      });
    });
  };
}

const isSubmittable = (arg: unknown): boolean =>
  typeof (arg as { submit?: unknown } | undefined)?.submit === 'function';
