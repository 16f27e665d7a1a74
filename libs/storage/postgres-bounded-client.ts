import pg from 'pg';
import type { PostgresTimeouts } from '../config/config.ts';
import { withBeginCoalescing } from './postgres-begin-coalescing.ts';
import { CLIENT_GRACE_MS, withReadDeadline } from './postgres-deadline.ts';
import { withPreparedNames } from './postgres-prepared-names.ts';
import { sendWithCallback } from './postgres-row-callback.ts';
import { type Send, wireOf } from './postgres-send.ts';

/**
 * Waiting for a connection (from the pool, or a new one to a server that accepts TCP but never
 * answers) never takes longer than a statement may: a frozen server costs a caller no more than
 * the statement timeout, whatever step it froze at.
 */
export const waitLimit = (limitMs: number, timeouts: PostgresTimeouts): number =>
  Math.min(limitMs, timeouts.statementMs);

/**
 * The pg Client of a server connection. Every statement is bounded twice: by the server
 * (`statement_timeout`, `idle_in_transaction_session_timeout`), and by the client a little
 * later for a server that answers nothing at all.
 *
 * A statement passes through these layers, outermost first (each file says what its layer does):
 *
 * 1. read deadline (postgres-deadline.ts). Outermost so that it bounds everything below, a held
 *    BEGIN and the statement written with it under one limit, and so that a connection it gave
 *    up on refuses every later statement unsent, a BEGIN too: no transaction is begun on it.
 * 2. BEGIN coalescing (postgres-begin-coalescing.ts). Above the naming, so it recognises BEGIN
 *    as Kysely sends it, and both the BEGIN and the statement written with it go down through
 *    the naming: the statement that opens a transaction is prepared like any other.
 * 3. prepared names (postgres-prepared-names.ts), when configured. It rewrites the statement
 *    into the form pg sends, so only the call into pg may come after it.
 * 4. row callback (postgres-row-callback.ts). The call into pg itself, in the form that lets a
 *    result's rows die young; nothing below it could bound a caller's own callback or cursor,
 *    so it refuses them.
 */
export function boundedClient(timeouts: PostgresTimeouts, prepare: boolean): typeof pg.Client {
  const readLimitMs = timeouts.statementMs + CLIENT_GRACE_MS;
  return class BoundedClient extends pg.Client {
    readonly #send: Send;

    constructor(config: pg.ClientConfig) {
      super({
        ...config,
        connectionTimeoutMillis: waitLimit(timeouts.connectMs, timeouts),
        statement_timeout: timeouts.statementMs,
        idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
        // Statements queued together are written together (a held BEGIN and the first
        // statement of its transaction); Kysely otherwise sends one at a time per connection.
        pipeline: true,
      });
      const wire = () => wireOf(this);
      const call = sendWithCallback(this);
      const named = prepare ? withPreparedNames(call) : call;
      this.#send = withReadDeadline(withBeginCoalescing(named, wire), readLimitMs, wire);
    }

    // biome-ignore lint/suspicious/noExplicitAny: pg's query has a dozen overloads; this wraps them all.
    override query(...args: any[]): any {
      return this.#send(args);
    }
  } as unknown as typeof pg.Client;
}
