import type { Transaction } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { Database } from '../storage/database.ts';
import type { JsonSchema } from './validation.ts';

export type Scope = 'workflows:read' | 'workflows:write' | 'workflows:execute' | 'analytics:read';
export type Method = 'get' | 'post' | 'put' | 'delete';

export interface RequestContext {
  requestId: string;
  principal: Principal;
  /** Aborted when the client goes away before the answer is sent. */
  signal: AbortSignal;
  /**
   * Returns a use case's `beforeCommit` hook: it renders the response from the use case's
   * result and, when the request carries an Idempotency-Key, stores it inside the write's own
   * transaction, so the write and its record commit together. The rendered response is the one
   * sent. Routes that write nothing need not call it: the router records their answer itself.
   * Without a key there is nothing to store and it returns undefined, which lets a write that
   * is a single statement skip the transaction.
   */
  recordResponse<T>(render: (result: T) => RouteResult): BeforeCommit<T> | undefined;
}

/** Called by a write use case inside its transaction, just before commit. */
export type BeforeCommit<T> = (trx: Transaction<Database>, result: T) => Promise<void>;

export interface RouteInput<P, Q, B, C = Record<string, never>> {
  params: P;
  query: Q;
  body: B;
  /** What the route's `checks` derived (a decoded cursor), so nothing is decoded twice. */
  checked: C;
  ctx: RequestContext;
}

export interface RouteResult {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * One HTTP operation: where it lives, what it accepts and what it needs. The same
 * declarations drive validation, the router and the API description.
 */
// biome-ignore lint/suspicious/noExplicitAny: a route table mixes handlers of different input types; each is checked where defined.
export interface Route<P = any, Q = any, B = any, C = any> {
  method: Method;
  /** Express path template, e.g. `/api/v1/tasks/:gid`; also the metrics label. */
  path: string;
  operationId: string;
  summary: string;
  tags: string[];
  /** The scope a token needs; 'master' for the master key only; null for public operations. */
  scope: Scope | 'master' | null;
  params?: JsonSchema;
  query?: JsonSchema;
  body?: JsonSchema;
  /**
   * Checks beyond the schemas (a signed cursor, a field list) on the raw path and query, each
   * named by the value it derives, which the handler receives as `checked`. They run even when
   * a schema check failed, so one answer lists every bad input.
   */
  checks?: (raw: { params: Record<string, unknown>; query: Record<string, unknown> }) => {
    [K in keyof C]: () => C[K];
  };
  successStatus: number;
  response?: JsonSchema;
  handle(input: RouteInput<P, Q, B, C>): Promise<RouteResult>;
}

export function defineRoute<P, Q, B, C = Record<string, never>>(
  route: Route<P, Q, B, C>,
): Route<P, Q, B, C> {
  return route;
}
