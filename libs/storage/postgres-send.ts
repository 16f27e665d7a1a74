import type pg from 'pg';

/**
 * One statement as a pg client's `query` receives it: Kysely sends `[text, values]`; a layer
 * below may turn it into `[{ name, text, values }]`.
 */
export type Statement = readonly unknown[];

/**
 * Sends one statement on one connection and answers its result. The server client
 * (postgres-bounded-client.ts) is a stack of these, each adding one thing to the one below.
 */
export type Send = (statement: Statement) => Promise<unknown>;

/** The connection's socket, as far as the layers need it. */
export interface Wire {
  cork(): void;
  uncork(): void;
  destroy(): void;
}

/**
 * pg keeps its socket private (`client.connection.stream`) and replaces it when TLS starts, so
 * it is looked up at each use; this is the one place that reaches into pg for it.
 */
export const wireOf = (client: pg.Client): Wire =>
  (client as unknown as { connection: { stream: Wire } }).connection.stream;
